// Unit tests of the metric catalog (core/catalog.hpp): the {placeholder} key matcher, the lookup of every
// key the collectors emit (with the unit and kind each must have), the uniqueness and reachability of the
// patterns, and the generated docs/metrics.md table.
#include "core/catalog.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/sample.hpp"

namespace runmon {
namespace {

// ---------------------------------------------------------------------------------------------------------
// KeyMatchesPattern

TEST(KeyMatchesPattern, LiteralPatterns) {
  EXPECT_TRUE(KeyMatchesPattern("cpu", "cpu"));
  EXPECT_TRUE(KeyMatchesPattern("", ""));
  EXPECT_FALSE(KeyMatchesPattern("cpu", "cpu_percent"));
  EXPECT_FALSE(KeyMatchesPattern("cpu_percent", "cpu"));
  EXPECT_FALSE(KeyMatchesPattern("cpU", "cpu"));
  EXPECT_FALSE(KeyMatchesPattern("", "cpu"));
  EXPECT_FALSE(KeyMatchesPattern("cpu", ""));
}

TEST(KeyMatchesPattern, PlaceholderMatchesDottedDiskPaths) {
  EXPECT_TRUE(KeyMatchesPattern("disk./.usageGB", "disk.{path}.usageGB"));
  EXPECT_TRUE(KeyMatchesPattern("disk./home/user.usageGB", "disk.{path}.usageGB"));
  EXPECT_TRUE(KeyMatchesPattern("disk./mnt/data.v2/x.usageGB", "disk.{path}.usageGB"));
  EXPECT_TRUE(KeyMatchesPattern("disk./a.usageGB.usageGB", "disk.{path}.usageGB"));  // backtracking
  EXPECT_TRUE(KeyMatchesPattern("disk./mnt/my files.usagePercent", "disk.{path}.usagePercent"));
  EXPECT_FALSE(KeyMatchesPattern("disk./.usageGB", "disk.{path}.usagePercent"));
  EXPECT_FALSE(KeyMatchesPattern("disk./.usageGBx", "disk.{path}.usageGB"));
  EXPECT_FALSE(KeyMatchesPattern("disk/.usageGB", "disk.{path}.usageGB"));
}

TEST(KeyMatchesPattern, PlaceholderNeedsAtLeastOneCharacter) {
  EXPECT_FALSE(KeyMatchesPattern("disk..usageGB", "disk.{path}.usageGB"));
  EXPECT_FALSE(KeyMatchesPattern("disk.usageGB", "disk.{path}.usageGB"));
  EXPECT_FALSE(KeyMatchesPattern("cpu..cpu_percent", "cpu.{i}.cpu_percent"));
  EXPECT_TRUE(KeyMatchesPattern("cpu.0.cpu_percent", "cpu.{i}.cpu_percent"));
  EXPECT_TRUE(KeyMatchesPattern("cpu.127.cpu_percent", "cpu.{i}.cpu_percent"));
}

TEST(KeyMatchesPattern, TrailingPlaceholder) {
  EXPECT_TRUE(KeyMatchesPattern("gpu.3", "gpu.{i}"));
  EXPECT_TRUE(KeyMatchesPattern("gpu.3.x.y", "gpu.{i}"));
  EXPECT_FALSE(KeyMatchesPattern("gpu.", "gpu.{i}"));
  EXPECT_FALSE(KeyMatchesPattern("gpu", "gpu.{i}"));
  EXPECT_TRUE(KeyMatchesPattern("x", "{i}"));
  EXPECT_FALSE(KeyMatchesPattern("", "{i}"));
}

TEST(KeyMatchesPattern, LeadingAndAdjacentPlaceholders) {
  EXPECT_TRUE(KeyMatchesPattern("abc.in", "{dev}.in"));
  EXPECT_FALSE(KeyMatchesPattern(".in", "{dev}.in"));
  EXPECT_TRUE(KeyMatchesPattern("ab", "{a}{b}"));
  EXPECT_TRUE(KeyMatchesPattern("abc", "{a}{b}"));
  EXPECT_FALSE(KeyMatchesPattern("a", "{a}{b}"));
  EXPECT_TRUE(KeyMatchesPattern("gpu.0.1.temp", "gpu.{i}.{j}.temp"));
  EXPECT_FALSE(KeyMatchesPattern("gpu.0.temp", "gpu.{i}.{j}.temp"));
  EXPECT_TRUE(KeyMatchesPattern("gpu.0.x.1.temp", "gpu.{i}.{j}.temp"));
}

TEST(KeyMatchesPattern, LiteralDiskInIsNotADevicePattern) {
  EXPECT_TRUE(KeyMatchesPattern("disk.in", "disk.in"));
  EXPECT_FALSE(KeyMatchesPattern("disk.in", "disk.{dev}.in"));
  EXPECT_FALSE(KeyMatchesPattern("disk.out", "disk.{dev}.out"));
  EXPECT_FALSE(KeyMatchesPattern("disk..in", "disk.{dev}.in"));
  EXPECT_TRUE(KeyMatchesPattern("disk.sda.in", "disk.{dev}.in"));
  EXPECT_TRUE(KeyMatchesPattern("disk.in.in", "disk.{dev}.in"));  // a device named "in"
  EXPECT_FALSE(KeyMatchesPattern("disk.sda.in", "disk.in"));
}

TEST(KeyMatchesPattern, MalformedPatternNeverMatches) {
  EXPECT_FALSE(KeyMatchesPattern("disk.x.in", "disk.{dev.in"));
  EXPECT_FALSE(KeyMatchesPattern("disk.{dev.in", "disk.{dev.in"));
  EXPECT_FALSE(KeyMatchesPattern("abc", "{"));
}

TEST(KeyMatchesPattern, LongKeysDoNotBlowUp) {
  const std::string path(5000, 'a');
  EXPECT_TRUE(KeyMatchesPattern("disk./" + path + ".usageGB", "disk.{path}.usageGB"));
  EXPECT_FALSE(KeyMatchesPattern("disk./" + path + ".usageG", "disk.{path}.usageGB"));
  EXPECT_FALSE(KeyMatchesPattern(std::string(5000, '.'), "{a}.{b}.{c}.x"));
}

// ---------------------------------------------------------------------------------------------------------
// FindMetricDefinition

struct Expected {
  std::string_view key;
  std::string_view pattern;
  std::string_view unit;
  MetricKind kind;
  std::string_view source;
};

constexpr Expected kEmittedKeys[] = {
    {"gpu.process.0.gpu", "gpu.process.{i}.gpu", "%", MetricKind::kGauge, "gpu"},
    {"gpu.process.0.memoryAllocatedBytes", "gpu.process.{i}.memoryAllocatedBytes", "bytes",
     MetricKind::kGauge, "gpu"},
    {"gpu.process.0.memoryAllocated", "gpu.process.{i}.memoryAllocated", "%", MetricKind::kGauge, "gpu"},
    {"gpu.process.0.memory", "gpu.process.{i}.memory", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.process.0.temp", "gpu.process.{i}.temp", "°C", MetricKind::kGauge, "gpu"},
    {"gpu.process.0.powerWatts", "gpu.process.{i}.powerWatts", "W", MetricKind::kGauge, "gpu"},
    {"gpu.process.0.enforcedPowerLimitWatts", "gpu.process.{i}.enforcedPowerLimitWatts", "W",
     MetricKind::kGauge, "gpu"},
    {"gpu.process.0.powerPercent", "gpu.process.{i}.powerPercent", "%", MetricKind::kGauge, "gpu"},
    {"gpu.3.gpu", "gpu.{i}.gpu", "%", MetricKind::kGauge, "gpu"},
    {"gpu.3.memory", "gpu.{i}.memory", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.memoryAllocated", "gpu.{i}.memoryAllocated", "%", MetricKind::kGauge, "gpu"},
    {"gpu.3.memoryAllocatedBytes", "gpu.{i}.memoryAllocatedBytes", "bytes", MetricKind::kGauge, "gpu"},
    {"gpu.3.temp", "gpu.{i}.temp", "°C", MetricKind::kGauge, "gpu"},
    {"gpu.3.powerWatts", "gpu.{i}.powerWatts", "W", MetricKind::kGauge, "gpu"},
    {"gpu.3.enforcedPowerLimitWatts", "gpu.{i}.enforcedPowerLimitWatts", "W", MetricKind::kGauge, "gpu"},
    {"gpu.3.powerPercent", "gpu.{i}.powerPercent", "%", MetricKind::kGauge, "gpu"},
    {"gpu.3.smClock", "gpu.{i}.smClock", "MHz", MetricKind::kGauge, "gpu"},
    {"gpu.3.memoryClock", "gpu.{i}.memoryClock", "MHz", MetricKind::kGauge, "gpu"},
    {"gpu.3.graphicsClock", "gpu.{i}.graphicsClock", "MHz", MetricKind::kGauge, "nvidia"},
    {"gpu.3.correctedMemoryErrors", "gpu.{i}.correctedMemoryErrors", "count", MetricKind::kGauge, "nvidia"},
    {"gpu.3.unCorrectedMemoryErrors", "gpu.{i}.unCorrectedMemoryErrors", "count", MetricKind::kGauge,
     "nvidia"},
    {"gpu.3.encoderUtilization", "gpu.{i}.encoderUtilization", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.fanSpeed", "gpu.{i}.fanSpeed", "%", MetricKind::kGauge, "gpu"},
    {"gpu.3.clocksEventReasons", "gpu.{i}.clocksEventReasons", "bitmask", MetricKind::kGauge, "nvidia"},
    {"gpu.3.energyJoules", "gpu.{i}.energyJoules", "J", MetricKind::kSinceStart, "gpu"},
    {"gpu.3.smActive", "gpu.{i}.smActive", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.smOccupancy", "gpu.{i}.smOccupancy", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.pipeTensorActive", "gpu.{i}.pipeTensorActive", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.pipeTensorHmmaActive", "gpu.{i}.pipeTensorHmmaActive", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.dramActive", "gpu.{i}.dramActive", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.pipeFp64Active", "gpu.{i}.pipeFp64Active", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.pipeFp32Active", "gpu.{i}.pipeFp32Active", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.pipeFp16Active", "gpu.{i}.pipeFp16Active", "%", MetricKind::kGauge, "nvidia"},
    {"gpu.3.pcieTxBytes", "gpu.{i}.pcieTxBytes", "bytes/s", MetricKind::kRate, "nvidia"},
    {"gpu.3.pcieRxBytes", "gpu.{i}.pcieRxBytes", "bytes/s", MetricKind::kRate, "nvidia"},
    {"gpu.3.nvlinkTxBytes", "gpu.{i}.nvlinkTxBytes", "bytes/s", MetricKind::kRate, "nvidia"},
    {"gpu.3.nvlinkRxBytes", "gpu.{i}.nvlinkRxBytes", "bytes/s", MetricKind::kRate, "nvidia"},
    {"gpu.12.gpu", "gpu.{i}.gpu", "%", MetricKind::kGauge, "gpu"},
    {"gpu.process.12.gpu", "gpu.process.{i}.gpu", "%", MetricKind::kGauge, "gpu"},
    {"gpu.3.memoryReadWriteActivity", "gpu.{i}.memoryReadWriteActivity", "%", MetricKind::kGauge, "amd"},
    {"gpu.3.gttMemoryAllocatedBytes", "gpu.{i}.gttMemoryAllocatedBytes", "bytes", MetricKind::kGauge, "amd"},
    {"gpu.3.gttMemoryAllocated", "gpu.{i}.gttMemoryAllocated", "%", MetricKind::kGauge, "amd"},
    {"gpu.3.tempEdge", "gpu.{i}.tempEdge", "°C", MetricKind::kGauge, "amd"},
    {"gpu.3.tempJunction", "gpu.{i}.tempJunction", "°C", MetricKind::kGauge, "amd"},
    {"gpu.3.tempMemory", "gpu.{i}.tempMemory", "°C", MetricKind::kGauge, "amd"},
    {"gpu.3.fanRpm", "gpu.{i}.fanRpm", "RPM", MetricKind::kGauge, "amd"},
    {"gpu.3.memoryOverDrive", "gpu.{i}.memoryOverDrive", "%", MetricKind::kGauge, "amd"},
    {"ipu.1.average board temp (C)", "ipu.{id}.average board temp (C)", "°C", MetricKind::kGauge, "ipu"},
    {"ipu.1.average die temp (C)", "ipu.{id}.average die temp (C)", "°C", MetricKind::kGauge, "ipu"},
    {"ipu.1.clock (MHz)", "ipu.{id}.clock (MHz)", "MHz", MetricKind::kGauge, "ipu"},
    {"ipu.1.ipu power (W)", "ipu.{id}.ipu power (W)", "W", MetricKind::kGauge, "ipu"},
    {"ipu.1.ipu utilisation (%)", "ipu.{id}.ipu utilisation (%)", "%", MetricKind::kGauge, "ipu"},
    {"ipu.12.ipu utilisation (session) (%)", "ipu.{id}.ipu utilisation (session) (%)", "%",
     MetricKind::kGauge, "ipu"},
    {"ipu.0.link speed (GT/s)", "ipu.{id}.link speed (GT/s)", "GT/s", MetricKind::kGauge, "ipu"},
    {"ipu.0.total board power (W)", "ipu.{id}.total board power (W)", "W", MetricKind::kGauge, "ipu"},
    {"ipu.0.link correctable error count", "ipu.{id}.link correctable error count", "count",
     MetricKind::kGauge, "ipu"},
    {"cpu", "cpu", "%", MetricKind::kGauge, "process"},
    {"proc.cpu.threads", "proc.cpu.threads", "count", MetricKind::kGauge, "process"},
    {"cpu_percent", "cpu_percent", "%", MetricKind::kGauge, "cpu"},
    {"cpu.0.cpu_percent", "cpu.{i}.cpu_percent", "%", MetricKind::kGauge, "cpu"},
    {"cpu.3.cpu_percent", "cpu.{i}.cpu_percent", "%", MetricKind::kGauge, "cpu"},
    {"cpu.255.cpu_percent", "cpu.{i}.cpu_percent", "%", MetricKind::kGauge, "cpu"},
    {"proc.memory.rssMB", "proc.memory.rssMB", "MiB", MetricKind::kGauge, "process"},
    {"proc.memory.percent", "proc.memory.percent", "%", MetricKind::kGauge, "process"},
    {"memory_percent", "memory_percent", "%", MetricKind::kGauge, "memory"},
    {"proc.memory.availableMB", "proc.memory.availableMB", "MiB", MetricKind::kGauge, "memory"},
    {"disk./.usagePercent", "disk.{path}.usagePercent", "%", MetricKind::kGauge, "disk"},
    {"disk./.usageGB", "disk.{path}.usageGB", "GiB", MetricKind::kGauge, "disk"},
    {"disk./home/user.usageGB", "disk.{path}.usageGB", "GiB", MetricKind::kGauge, "disk"},
    {"disk./home/user.usagePercent", "disk.{path}.usagePercent", "%", MetricKind::kGauge, "disk"},
    {"disk.in", "disk.in", "MiB", MetricKind::kSinceStart, "disk"},
    {"disk.out", "disk.out", "MiB", MetricKind::kSinceStart, "disk"},
    {"disk.readMBPerSec", "disk.readMBPerSec", "MiB/s", MetricKind::kRate, "disk"},
    {"disk.writeMBPerSec", "disk.writeMBPerSec", "MiB/s", MetricKind::kRate, "disk"},
    {"disk.nvme0n1.in", "disk.{dev}.in", "MiB", MetricKind::kSinceStart, "disk"},
    {"disk.nvme0n1.out", "disk.{dev}.out", "MiB", MetricKind::kSinceStart, "disk"},
    {"disk.sda.in", "disk.{dev}.in", "MiB", MetricKind::kSinceStart, "disk"},
    {"disk.dm-0.out", "disk.{dev}.out", "MiB", MetricKind::kSinceStart, "disk"},
    {"network.sent", "network.sent", "bytes", MetricKind::kSinceStart, "network"},
    {"network.recv", "network.recv", "bytes", MetricKind::kSinceStart, "network"},
    {"network.sentBytesPerSec", "network.sentBytesPerSec", "bytes/s", MetricKind::kRate, "network"},
    {"network.recvBytesPerSec", "network.recvBytesPerSec", "bytes/s", MetricKind::kRate, "network"},
    {"cgroup.memory.limitMB", "cgroup.memory.limitMB", "MiB", MetricKind::kGauge, "cgroup"},
    {"cgroup.cpu.limit", "cgroup.cpu.limit", "CPUs", MetricKind::kGauge, "cgroup"},
    {"cgroup.cpu.throttledPercent", "cgroup.cpu.throttledPercent", "%", MetricKind::kGauge, "cgroup"},
    {"cgroup.memory.oomKills", "cgroup.memory.oomKills", "count", MetricKind::kGauge, "cgroup"},
    {"runmon.cpuPercent", "runmon.cpuPercent", "%", MetricKind::kGauge, "runmon"},
    {"runmon.rssMB", "runmon.rssMB", "MiB", MetricKind::kGauge, "runmon"},
    {"runmon.sampleMillis", "runmon.sampleMillis", "ms", MetricKind::kGauge, "runmon"},
};

TEST(FindMetricDefinition, EveryEmittedKey) {
  for (const Expected& e : kEmittedKeys) {
    SCOPED_TRACE(std::string(e.key));
    const MetricDefinition* d = FindMetricDefinition(e.key);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->pattern, e.pattern);
    EXPECT_EQ(d->unit, e.unit);
    EXPECT_EQ(d->kind, e.kind);
    EXPECT_EQ(d->source, e.source);
    EXPECT_FALSE(d->title.empty());
    EXPECT_FALSE(d->description.empty());
  }
}

TEST(FindMetricDefinition, UnknownKeys) {
  for (std::string_view key : {"",
                               "bogus",
                               "cpu.",
                               "cpu.3",
                               "cpu.3.cpu_percentx",
                               "disk",
                               "disk.",
                               "disk..in",
                               "disk.in.x",
                               "disk..usageGB",
                               "network",
                               "network.sent.x",
                               "gpu.0",
                               "gpu.0.tempx",
                               "gpu.process.0",
                               "proc.memory",
                               "runmon",
                               "CPU",
                               "cgroup.cpu",
                               "memory_percent "}) {
    EXPECT_EQ(FindMetricDefinition(key), nullptr) << "'" << key << "'";
  }
}

TEST(FindMetricDefinition, ReturnsAPointerIntoTheCatalog) {
  const auto catalog = MetricCatalog();
  const MetricDefinition* d = FindMetricDefinition("disk.in");
  ASSERT_NE(d, nullptr);
  EXPECT_GE(d, catalog.data());
  EXPECT_LT(d, catalog.data() + catalog.size());
}

// ---------------------------------------------------------------------------------------------------------
// The catalog as a whole

TEST(MetricCatalog, PatternsAreUniqueAndWellFormed) {
  const auto catalog = MetricCatalog();
  ASSERT_FALSE(catalog.empty());
  std::set<std::string_view> patterns;
  const std::set<std::string_view> units = {"%",    "MiB",  "GiB", "bytes", "bytes/s", "MiB/s", "count",
                                            "CPUs", "ms",   "°C",  "W",     "MHz",     "J",     "bitmask",
                                            "RPM",  "GT/s", "s",   "µs",    "Mbit/s",  "score"};
  for (const auto& d : catalog) {
    SCOPED_TRACE(std::string(d.pattern));
    EXPECT_TRUE(patterns.insert(d.pattern).second) << "duplicate pattern";
    EXPECT_FALSE(d.pattern.empty());
    EXPECT_FALSE(d.title.empty());
    EXPECT_FALSE(d.description.empty());
    EXPECT_EQ(units.count(d.unit), 1u) << "unit " << d.unit;
    // The family as docs name it: a lowercase word (each family's own; a new family brings its own).
    EXPECT_FALSE(d.source.empty());
    EXPECT_TRUE(std::all_of(d.source.begin(), d.source.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
        << "source " << d.source;
    // Braces come in pairs, and a pattern has no '|' that would break the markdown table.
    size_t open = 0, close = 0;
    for (char c : d.pattern) {
      open += c == '{';
      close += c == '}';
    }
    EXPECT_EQ(open, close);
    EXPECT_EQ(d.pattern.find('|'), std::string_view::npos);
    EXPECT_EQ(d.title.find('|'), std::string_view::npos);
    EXPECT_EQ(d.description.find('|'), std::string_view::npos);
    EXPECT_EQ(d.description.find('\n'), std::string_view::npos);
  }
}

TEST(MetricCatalog, EveryDefinitionIsReachable) {
  // A key built from each pattern (placeholders filled in) must find that very definition, not an
  // earlier one that shadows it.
  for (const auto& d : MetricCatalog()) {
    std::string key;
    for (size_t i = 0; i < d.pattern.size(); ++i) {
      if (d.pattern[i] == '{') {
        const size_t close = d.pattern.find('}', i);
        ASSERT_NE(close, std::string_view::npos) << d.pattern;
        const std::string_view name = d.pattern.substr(i + 1, close - i - 1);
        key += name == "path" ? "/data/x" : name == "dev" ? "nvme0n1" : "7";
        i = close;
      } else {
        key += d.pattern[i];
      }
    }
    EXPECT_EQ(FindMetricDefinition(key), &d) << key << " for " << d.pattern;
    EXPECT_TRUE(KeyMatchesPattern(key, d.pattern)) << key;
  }
}

// Every pattern is reachable: a key made from it (what its collector emits through MetricKey) finds that
// pattern, not an earlier one that would shadow it. Derived from the catalog, so a new family is checked
// without a line here.
TEST(MetricCatalog, EveryPatternFindsItsOwnKeys) {
  for (const auto& d : MetricCatalog()) {
    for (const std::string_view placeholder : {"0", "12", "nvme0n1", "/data"}) {
      const std::string key = MetricKey(d, placeholder);
      SCOPED_TRACE(key);
      const MetricDefinition* found = FindMetricDefinition(key);
      ASSERT_NE(found, nullptr);
      EXPECT_EQ(found->pattern, d.pattern);
    }
  }
}

TEST(MetricKindName, Names) {
  EXPECT_EQ(MetricKindName(MetricKind::kGauge), "gauge");
  EXPECT_EQ(MetricKindName(MetricKind::kSinceStart), "since start");
  EXPECT_EQ(MetricKindName(MetricKind::kRate), "rate");
}

// ---------------------------------------------------------------------------------------------------------
// RenderCatalogMarkdown

TEST(RenderCatalogMarkdown, HasOneRowPerDefinition) {
  const std::string markdown = RenderCatalogMarkdown();
  EXPECT_TRUE(markdown.starts_with("# Metrics\n"));
  EXPECT_NE(
      markdown.find("| Key | Title | Unit | Kind | Source | Description |\n|---|---|---|---|---|---|\n"),
      std::string::npos);
  for (const auto& d : MetricCatalog()) {
    const std::string row = "| `" + std::string(d.pattern) + "` | " + std::string(d.title) + " | " +
                            std::string(d.unit) + " | " + std::string(MetricKindName(d.kind)) + " | " +
                            std::string(d.source) + " | " + std::string(d.description) + " |\n";
    EXPECT_NE(markdown.find(row), std::string::npos) << "missing row for " << d.pattern;
  }
  size_t rows = 0;
  for (size_t at = markdown.find("\n| `"); at != std::string::npos; at = markdown.find("\n| `", at + 1))
    ++rows;
  EXPECT_EQ(rows, MetricCatalog().size());
  EXPECT_TRUE(markdown.ends_with(" |\n"));
}

TEST(RenderCatalogMarkdown, RowsFollowCatalogOrder) {
  const std::string markdown = RenderCatalogMarkdown();
  size_t last = 0;
  for (const auto& d : MetricCatalog()) {
    const size_t at = markdown.find("| `" + std::string(d.pattern) + "` |");
    ASSERT_NE(at, std::string::npos) << d.pattern;
    EXPECT_GT(at, last) << d.pattern;
    last = at;
  }
}

}  // namespace
}  // namespace runmon

namespace runmon {
namespace {

// metrics.md A.1: runmon writes unCorrectedMemoryErrors; readers also take W&B's uncorrectedMemoryErrors
// (a run W&B recorded) as the same metric.
TEST(Catalog, AcceptsTheWandbSpellingOfUncorrectedErrors) {
  const MetricDefinition* runmon = FindMetricDefinition("gpu.0.unCorrectedMemoryErrors");
  ASSERT_NE(runmon, nullptr);
  EXPECT_EQ(FindMetricDefinition("gpu.3.uncorrectedMemoryErrors"), runmon);
  EXPECT_EQ(PlaceholderValue("gpu.3.uncorrectedMemoryErrors",
                             MatchingPattern(*runmon, "gpu.3.uncorrectedMemoryErrors")),
            "3");
  EXPECT_EQ(FindMetricDefinition("gpu.3.UncorrectedMemoryErrors"), nullptr);
}

// LEET's IPU charts look for W&B's IPU keys without their unit: readers take both spellings as one metric,
// and neither is taken for another field's ("ipu.0.ipu utilisation (session) (%)" is not "ipu utilisation").
TEST(Catalog, AcceptsLeetsSpellingOfIpuKeys) {
  for (const auto& [runmon_key, leet_key] : std::vector<std::pair<std::string, std::string>>{
           {"ipu.0.average board temp (C)", "ipu.0.average board temp"},
           {"ipu.0.average die temp (C)", "ipu.0.average die temp"},
           {"ipu.0.clock (MHz)", "ipu.0.clock"},
           {"ipu.0.ipu power (W)", "ipu.0.ipu power"},
           {"ipu.0.ipu utilisation (session) (%)", "ipu.0.ipu utilisation (session)"}}) {
    const MetricDefinition* runmon = FindMetricDefinition(runmon_key);
    ASSERT_NE(runmon, nullptr) << runmon_key;
    EXPECT_EQ(FindMetricDefinition(leet_key), runmon) << leet_key;
  }
  EXPECT_EQ(FindMetricDefinition("ipu.0.ipu utilisation (session) (%)")->pattern,
            "ipu.{id}.ipu utilisation (session) (%)");
  EXPECT_EQ(FindMetricDefinition("ipu.0.board ipu index"), nullptr);  // first-sight fields are "Other"
  EXPECT_EQ(FindMetricDefinition("ipu.0.link correctable error count (session)"), nullptr);
}

TEST(Catalog, KeysAreFormedFromDescriptors) {
  const MetricDefinition* device = FindMetricDefinition("disk.sda.in");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(MetricKey(*device, "nvme0n1"), "disk.nvme0n1.in");
  const MetricDefinition* cpu = FindMetricDefinition("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(MetricKey(*cpu), "cpu");
  MetricBatch batch;
  batch.Add(*device, "sdb", 1.5);
  batch.Add(*cpu, 2);
  ASSERT_EQ(batch.items().size(), 2u);
  EXPECT_EQ(batch.items()[0].key, "disk.sdb.in");
  EXPECT_EQ(batch.items()[1].key, "cpu");
}

}  // namespace
}  // namespace runmon
