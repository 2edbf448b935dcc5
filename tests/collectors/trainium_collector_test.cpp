// The Trainium collector and its family against fake neuron-monitors (/bin/sh scripts replaying the real
// trn1.2xlarge documents): nothing before the first document, the latest document's keys for the monitored
// process's runtime, a stale document not used, a hung neuron-monitor ended and started again, an exiting
// one started again and a bad line skipped, each reported once; the metadata published once; and the
// family finding neuron-monitor, giving it a private config (gone after the run) or the user's, and saying
// why it is absent.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "collectors/builtin.hpp"
#include "collectors/trainium/trainium_collector.hpp"
#include "host/fake_tool.hpp"
#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon {
namespace {

using test::ReadFile;
using test::TempDir;
using test::WriteFakeTool;
using testing::WaitUntil;

constexpr auto kPatience = std::chrono::seconds(10);

std::vector<std::string> Trn1Lines() {
  std::ifstream in(RUNMON_FIXTURES_DIR "/neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The fixture's documents with their runtimes' pids made this test process's own.
std::string DocumentsOfThisProcess(const std::filesystem::path& dir) {
  const std::string pid = std::to_string(::getpid());
  std::string text;
  for (std::string line : Trn1Lines()) {
    for (const char* fixture_pid : {"\"pid\": 1337", "\"pid\": 16851"}) {
      if (const size_t at = line.find(fixture_pid); at != std::string::npos) {
        line.replace(at, std::string(fixture_pid).size(), "\"pid\": " + pid);
      }
    }
    text += line + "\n";
  }
  const auto path = dir / "documents.jsonl";
  std::ofstream(path) << text;
  return path.string();
}

class Warnings {
 public:
  std::function<void(const std::string&)> Handler() {
    return [this](const std::string& message) {
      std::lock_guard lock(mutex_);
      messages_.push_back(message);
    };
  }
  std::vector<std::string> messages() const {
    std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

class TrainiumCollectorTest : public ::testing::Test {
 protected:
  TrainiumOptions Options(const std::string& tool) {
    TrainiumOptions options;
    options.command = {.executable = tool};
    options.tool_options = {
        .restart_initial_seconds = 0.05, .restart_max_seconds = 0.2, .stop_grace_seconds = 0.2};
    options.start_tool = StartStreamingTool;
    options.reader = trainium::MakeLinkedDocumentReader();
    options.stale_after_seconds = 30;
    options.hung_after_seconds = 60;
    options.paths = HostPaths::System();
    options.pid = ::getpid();
    options.monotonic_seconds = Clocks::System().monotonic_seconds;
    options.publish_metadata = [this](const nlohmann::json& metadata) {
      std::lock_guard lock(mutex_);
      metadata_.push_back(metadata);
    };
    options.warn = warnings_.Handler();
    return options;
  }

  // Collects until a tick gives `key` (or the patience runs out); that tick's values. Ticks in between may
  // fail (a stale document).
  std::map<std::string, double> CollectUntil(Collector& collector, const std::string& key) {
    std::map<std::string, double> values;
    WaitUntil(
        [&] {
          MetricBatch batch;
          (void)collector.Collect(Tick{}, batch);
          values.clear();
          for (const Metric& metric : batch.items()) values[metric.key] = metric.value;
          return values.contains(key);
        },
        kPatience);
    return values;
  }

  std::vector<nlohmann::json> metadata() {
    std::lock_guard lock(mutex_);
    return metadata_;
  }

  TempDir dir_;
  Warnings warnings_;
  std::mutex mutex_;
  std::vector<nlohmann::json> metadata_;
};

TEST_F(TrainiumCollectorTest, EmitsTheLatestDocumentForTheMonitoredProcesssRuntime) {
  const std::string documents = DocumentsOfThisProcess(dir_.path());
  // Like neuron-monitor: nothing for a while, then a document per period, then running until killed.
  const auto tool =
      WriteFakeTool(dir_.path(), "neuron-monitor",
                    "sleep 0.3; while IFS= read -r line; do printf '%s\\n' \"$line\"; sleep 0.1; "
                    "done < '" +
                        documents + "'; exec sleep 1000");
  auto collector = MakeTrainiumCollector(Options(tool));
  MetricBatch before;
  ASSERT_TRUE(collector->Collect(Tick{}, before));
  EXPECT_TRUE(before.empty());  // no document yet: no keys, no error
  // The third document's values, once it is the latest.
  std::map<std::string, double> values;
  ASSERT_TRUE(WaitUntil(
      [&] {
        values = CollectUntil(*collector, "trn.0.neuroncore_utilization");
        return values["trn.0.neuroncore_utilization"] == 1.3128372400154966;
      },
      kPatience));
  EXPECT_EQ(values.at("trn.host_total_memory_usage"), 612179968);
  EXPECT_EQ(values.at("trn.0.neuroncore_memory_usage.tensors"), 943608);
  EXPECT_EQ(values.at("trn.system.memory_used_bytes"), 11236286464.0);
  EXPECT_EQ(collector->Name(), "trainium");
  EXPECT_FALSE(collector->Ended());
  const auto published = metadata();
  ASSERT_EQ(published.size(), 1u);  // once, whatever the number of documents
  EXPECT_EQ(published[0]["trainium"]["neuron_device_count"], 1);
  EXPECT_TRUE(warnings_.messages().empty());
}

TEST_F(TrainiumCollectorTest, OtherProcessesRuntimesGiveOnlyTheInstanceKeys) {
  const auto tool = WriteFakeTool(dir_.path(), "neuron-monitor",
                                  "cat '" RUNMON_FIXTURES_DIR
                                  "/neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl'; exec sleep 1000");
  auto collector = MakeTrainiumCollector(Options(tool));
  const auto values = CollectUntil(*collector, "trn.system.memory_used_bytes");
  ASSERT_TRUE(values.contains("trn.system.memory_used_bytes"));
  for (const auto& [key, value] : values) {
    EXPECT_TRUE(key.starts_with("trn.system.") || key.starts_with("trn.device.")) << key;
  }
}

TEST_F(TrainiumCollectorTest, AStaleDocumentIsNotUsedAndAHungToolIsStartedAgainReportedOnce) {
  const std::string documents = DocumentsOfThisProcess(dir_.path());
  const auto runs = dir_.path() / "runs";
  // One document per start, then silence (and SIGTERM ignored).
  const auto tool = WriteFakeTool(dir_.path(), "neuron-monitor",
                                  "trap '' TERM; echo run >> '" + runs.string() + "'; head -n 1 '" +
                                      documents + "'; while :; do sleep 0.05; done");
  TrainiumOptions options = Options(tool);
  options.stale_after_seconds = 0.3;
  options.hung_after_seconds = 0.6;
  auto collector = MakeTrainiumCollector(options);
  CollectUntil(*collector, "trn.0.neuroncore_utilization");
  // Then the document goes stale: an error and no keys.
  Status stale = OkStatus();
  ASSERT_TRUE(WaitUntil(
      [&] {
        MetricBatch batch;
        stale = collector->Collect(Tick{}, batch);
        return !stale && batch.empty();
      },
      kPatience));
  EXPECT_TRUE(stale.error().starts_with(tool + ": its latest document is ")) << stale.error();
  // Then it is hung: ended, started again, its next document used.
  ASSERT_TRUE(WaitUntil(
      [&] {
        CollectUntil(*collector, "trn.0.neuroncore_utilization");
        return ReadFile(runs) == "run\nrun\nrun\n";
      },
      kPatience));
  const auto messages = warnings_.messages();
  ASSERT_EQ(messages.size(), 1u) << messages.back();  // three hangs, one report
  EXPECT_TRUE(messages[0].starts_with(tool + ": no document for ")) << messages[0];
  EXPECT_TRUE(messages[0].ends_with("(further hangs are not reported)")) << messages[0];
}

// A neuron-monitor that never writes, started again just as silent: each run is ended when it has been
// silent that long, not only the first; one report.
TEST_F(TrainiumCollectorTest, EveryHungRunIsEndedNotOnlyTheFirst) {
  const auto runs = dir_.path() / "runs";
  const auto tool =
      WriteFakeTool(dir_.path(), "neuron-monitor",
                    "trap '' TERM; echo run >> '" + runs.string() + "'; while :; do sleep 0.05; done");
  TrainiumOptions options = Options(tool);
  options.stale_after_seconds = 0.1;
  options.hung_after_seconds = 0.3;
  auto collector = MakeTrainiumCollector(options);
  ASSERT_TRUE(WaitUntil(
      [&] {
        MetricBatch batch;
        (void)collector->Collect(Tick{}, batch);
        return ReadFile(runs) == "run\nrun\nrun\n";
      },
      kPatience))
      << ReadFile(runs);
  const auto messages = warnings_.messages();
  ASSERT_EQ(messages.size(), 1u) << messages.back();
  EXPECT_TRUE(messages[0].starts_with(tool + ": no document for ")) << messages[0];
}

// A neuron-monitor that exits at once, silent, with a restart delay longer than the hang threshold: no run
// is up to end when the silence passes the threshold, and its exits stay exits (reported once as such).
TEST_F(TrainiumCollectorTest, SilenceWhileNoRunIsUpIsNotAHang) {
  const auto runs = dir_.path() / "runs";
  const auto tool =
      WriteFakeTool(dir_.path(), "neuron-monitor", "echo run >> '" + runs.string() + "'; exit 3");
  TrainiumOptions options = Options(tool);
  options.tool_options.restart_initial_seconds = 0.6;
  options.tool_options.restart_max_seconds = 0.6;
  options.stale_after_seconds = 0.1;
  options.hung_after_seconds = 0.25;
  auto collector = MakeTrainiumCollector(options);
  ASSERT_TRUE(WaitUntil(
      [&] {
        MetricBatch batch;
        (void)collector->Collect(Tick{}, batch);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return ReadFile(runs) == "run\nrun\nrun\n";
      },
      kPatience));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the third run's exit reported
  MetricBatch batch;
  (void)collector->Collect(Tick{}, batch);
  const auto messages = warnings_.messages();
  ASSERT_EQ(messages.size(), 1u) << messages.back();
  EXPECT_EQ(messages[0],
            tool + ": exited with status 3; starting it again in 0.6 s (further restarts are not reported)");
}

TEST_F(TrainiumCollectorTest, AnExitAndABadLineAreEachReportedOnce) {
  const std::string documents = DocumentsOfThisProcess(dir_.path());
  const auto tool = WriteFakeTool(
      dir_.path(), "neuron-monitor",
      "echo 'neuron-monitor: warming up'; head -n 1 '" + documents + "'; echo 'device lost' >&2; exit 1");
  auto collector = MakeTrainiumCollector(Options(tool));
  ASSERT_TRUE(WaitUntil(
      [&] {
        CollectUntil(*collector, "trn.0.neuroncore_utilization");
        return warnings_.messages().size() >= 2;
      },
      kPatience));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // several more exits and bad lines
  MetricBatch batch;
  ASSERT_TRUE(collector->Collect(Tick{}, batch));
  const auto messages = warnings_.messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], tool +
                             ": skipped a line (not a JSON object): neuron-monitor: warming up (further bad "
                             "lines are not reported)");
  EXPECT_EQ(messages[1], tool +
                             ": exited with status 1: device lost; starting it again in 0.05 s (further "
                             "restarts are not reported)");
}

TEST(NeuronDocumentReader, TheModuleReadsAsTheLinkedParserAndAMissingOneIsNamed) {
  auto loaded = trainium::LoadDocumentReader();  // runmon-modules beside the test
  ASSERT_TRUE(loaded) << loaded.error();
  const std::string line = Trn1Lines()[0];
  auto from_module = (*loaded)->Read(line);
  auto linked = trainium::MakeLinkedDocumentReader()->Read(line);
  ASSERT_TRUE(from_module && linked);
  EXPECT_EQ(from_module->runtimes.size(), linked->runtimes.size());
  EXPECT_EQ(from_module->runtimes[0].host_bytes, linked->runtimes[0].host_bytes);
  TempDir empty;
  auto missing = trainium::LoadDocumentReader(empty.path());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find((empty.path() / "neuron-monitor.so").string()), std::string::npos)
      << missing.error();
}

TEST(ThresholdsForPeriod, GiveTwoPeriodsAndSlackAndAtLeast30SecondsBeforeAHang) {
  EXPECT_EQ(ThresholdsForPeriod(1).stale_after_seconds, 3);
  EXPECT_EQ(ThresholdsForPeriod(15).stale_after_seconds, 32);
  EXPECT_EQ(ThresholdsForPeriod(1).hung_after_seconds, 30);
  EXPECT_EQ(ThresholdsForPeriod(15).hung_after_seconds, 75);
}

const CollectorFamily& TrainiumFamily() {
  for (const CollectorFamily* family : CollectorFamilies()) {
    if (family->name == "trainium") return *family;
  }
  throw std::runtime_error("no trainium family");
}

CollectorContext FamilyContext(const std::map<std::string, std::string>& environment) {
  CollectorContext ctx;
  ctx.paths = HostPaths::System();
  ctx.settings.interval_seconds = 2.5;
  ctx.pid = ::getpid();
  ctx.clocks = Clocks::System();
  ctx.environment = environment;
  return ctx;
}

TEST(TrainiumFamily, GivesNeuronMonitorAPrivateConfigThatIsGoneAfterTheRun) {
  TempDir dir;
  const auto log = dir.path() / "log";
  const auto tool = WriteFakeTool(dir.path(), "neuron-monitor",
                                  "echo \"$1\" > '" + log.string() + "'; echo \"$2\" >> '" + log.string() +
                                      "'; stat -c %a \"$2\" >> '" + log.string() + "'; cat \"$2\" >> '" +
                                      log.string() + "'; exec sleep 1000");
  const auto tmp = dir.path() / "tmp";
  std::filesystem::create_directory(tmp);
  std::string config_path;
  {
    FamilyStart started = TrainiumFamily().start(
        FamilyContext({{"PATH", dir.path().string() + ":/usr/bin:/bin"}, {"TMPDIR", tmp.string()}}));
    ASSERT_EQ(started.collectors.size(), 1u) << started.absent_reason;
    ASSERT_TRUE(
        WaitUntil([&] { return ReadFile(log).find("system_metrics") != std::string::npos; }, kPatience));
    std::istringstream lines(ReadFile(log));
    std::string flag, mode;
    std::getline(lines, flag);
    std::getline(lines, config_path);
    std::getline(lines, mode);
    EXPECT_EQ(flag, "-c");
    EXPECT_TRUE(config_path.starts_with((tmp / "runmon-neuron-monitor-").string())) << config_path;
    EXPECT_EQ(mode, "600");
    std::string config((std::istreambuf_iterator<char>(lines)), std::istreambuf_iterator<char>());
    EXPECT_EQ(nlohmann::json::parse(config)["period"], "2s");
  }
  EXPECT_FALSE(std::filesystem::exists(config_path));
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
}

// As W&B's tempfile does, a TMPDIR that does not exist (or cannot be written to) gives way to /tmp.
TEST(TrainiumFamily, MakesThePrivateConfigInTmpWhenTmpdirIsUnusable) {
  TempDir dir;
  const auto log = dir.path() / "log";
  const auto tool =
      WriteFakeTool(dir.path(), "neuron-monitor", "echo \"$2\" > '" + log.string() + "'; exec sleep 1000");
  std::string config_path;
  {
    FamilyStart started = TrainiumFamily().start(FamilyContext(
        {{"RUNMON_NEURON_MONITOR", tool}, {"TMPDIR", (dir.path() / "no-such-directory").string()}}));
    ASSERT_EQ(started.collectors.size(), 1u) << started.absent_reason;
    ASSERT_TRUE(WaitUntil([&] { return ReadFile(log).ends_with("\n"); }, kPatience));
    config_path = ReadFile(log);
    config_path.pop_back();
    EXPECT_TRUE(config_path.starts_with("/tmp/runmon-neuron-monitor-")) << config_path;
    EXPECT_TRUE(std::filesystem::exists(config_path));
  }
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(config_path).parent_path()));
}

TEST(TrainiumFamily, UsesTheConfigTheSettingNamesAsItIs) {
  TempDir dir;
  const auto log = dir.path() / "log";
  const auto tool =
      WriteFakeTool(dir.path(), "monitor", "echo \"$@\" > '" + log.string() + "'; exec sleep 1000");
  CollectorContext ctx = FamilyContext({{"RUNMON_NEURON_MONITOR", tool}});
  ctx.settings.other["x_stats_neuron_monitor_config_path"] = "/etc/neuron/my-config.json";
  FamilyStart started = TrainiumFamily().start(ctx);
  ASSERT_EQ(started.collectors.size(), 1u) << started.absent_reason;
  ASSERT_TRUE(WaitUntil([&] { return !ReadFile(log).empty(); }, kPatience));
  EXPECT_EQ(ReadFile(log), "-c /etc/neuron/my-config.json\n");
}

TEST(TrainiumFamily, SaysWhyItIsAbsent) {
  TempDir dir;
  FamilyStart none = TrainiumFamily().start(FamilyContext({{"PATH", dir.path().string()}}));
  EXPECT_TRUE(none.collectors.empty());
  EXPECT_EQ(none.absent_reason, "neuron-monitor not found on PATH or in /opt/aws/neuron/bin");
  FamilyStart named =
      TrainiumFamily().start(FamilyContext({{"RUNMON_NEURON_MONITOR", (dir.path() / "nm").string()}}));
  EXPECT_TRUE(named.collectors.empty());
  EXPECT_TRUE(named.absent_reason.starts_with("RUNMON_NEURON_MONITOR: ")) << named.absent_reason;
  CollectorContext fixture_root = FamilyContext({{"PATH", dir.path().string()}});
  fixture_root.paths = HostPaths::Under(dir.path());
  EXPECT_TRUE(
      TrainiumFamily().start(fixture_root).absent_reason.starts_with("neuron-monitor is only looked for"));
}

TEST(TrainiumFamily, ProbeGivesTheFirstDocumentsMetadata) {
  TempDir dir;
  WriteFakeTool(dir.path(), "neuron-monitor",
                "head -n 1 '" RUNMON_FIXTURES_DIR
                "/neuron_monitor/neuron_monitor_trn1.2xlarge.jsonl'; exec sleep 1000");
  auto metadata = TrainiumFamily().probe(FamilyContext({{"PATH", dir.path().string() + ":/usr/bin:/bin"}}));
  ASSERT_TRUE(metadata) << metadata.error();
  EXPECT_EQ((*metadata)["trainium"]["instance_type"], "trn1.2xlarge");
  WriteFakeTool(dir.path(), "neuron-monitor", "echo 'no such device' >&2; exit 4");
  const auto probe_started = std::chrono::steady_clock::now();
  auto failed = TrainiumFamily().probe(FamilyContext({{"PATH", dir.path().string()}}));
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().find("exited with status 4: no such device"), std::string::npos) << failed.error();
  // An exit ends the wait: no document is coming, so `runmon info` does not wait out the 5 s.
  EXPECT_LT(std::chrono::steady_clock::now() - probe_started, std::chrono::seconds(4));
}

}  // namespace
}  // namespace runmon
