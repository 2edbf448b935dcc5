// Unit tests of config/settings.hpp: duration parsing, every W&B x_stats_* setting (valid values, bad values
// with the setting's name in the message, unknown names), `--set NAME=VALUE` assignments, the mapping of
// WANDB_X_STATS_* / WANDB__STATS_* environment variables and ApplyEnvironment.
#include "config/settings.hpp"

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace runmon {
namespace {

template <typename T>
void ExpectErrorContains(const Result<T>& result, std::initializer_list<std::string_view> fragments) {
  ASSERT_FALSE(result.ok()) << "expected an error";
  for (std::string_view fragment : fragments) {
    EXPECT_NE(result.error().find(fragment), std::string::npos)
        << "message '" << result.error() << "' lacks '" << fragment << "'";
  }
}

// ---------------------------------------------------------------------------------------------------------
// Defaults

TEST(Settings, Defaults) {
  const Settings s;
  EXPECT_DOUBLE_EQ(s.interval_seconds, 15.0);
  EXPECT_DOUBLE_EQ(kDefaultIntervalSeconds, 15.0);
  EXPECT_DOUBLE_EQ(kMinIntervalSeconds, 0.1);
  EXPECT_FALSE(s.pid.has_value());
  EXPECT_TRUE(s.track_process_tree);
  EXPECT_FALSE(s.no_cgroup);
  EXPECT_FALSE(s.per_core_cpu);
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/"}));
  EXPECT_FALSE(s.cpu_count.has_value());
  EXPECT_FALSE(s.cpu_logical_count.has_value());
  EXPECT_FALSE(s.gpu_count.has_value());
  EXPECT_FALSE(s.gpu_type.has_value());
  EXPECT_TRUE(s.other.empty());
}

// ---------------------------------------------------------------------------------------------------------
// ParseDurationSeconds

TEST(ParseDurationSeconds, AcceptedForms) {
  struct Case {
    std::string_view text;
    double seconds;
  };
  for (const Case& c :
       {Case{"0.5", 0.5}, Case{"500ms", 0.5}, Case{"15s", 15.0}, Case{"2m", 120.0}, Case{"1.5h", 5400.0},
        Case{"0", 0.0}, Case{"1", 1.0}, Case{"100ms", 0.1}, Case{" 15s\n", 15.0}, Case{"1e3ms", 1.0},
        Case{"2.5e-1", 0.25}, Case{"0s", 0.0}, Case{"0ms", 0.0}, Case{"8760h", 86400.0 * 365}}) {
    const auto seconds = ParseDurationSeconds(c.text);
    ASSERT_TRUE(seconds.ok()) << "'" << c.text << "': " << seconds.error();
    EXPECT_DOUBLE_EQ(*seconds, c.seconds) << c.text;
  }
}

TEST(ParseDurationSeconds, Rejected) {
  for (std::string_view text :
       {"-1",   "-1s", "-0.5ms", "abc",     "nan", "NaN", "nans",       "inf",   "-inf",  "infinity", "infs",
        "",     " ",   "1e400",  "1e400ms", "ms",  "s",   "m",          "h",     "1x",    "1d",       "1 2",
        "0x10", "+1",  "1.5.5",  "s1",      "1sm", "1hs", "15 seconds", "8761h", "1e300h"}) {
    const auto seconds = ParseDurationSeconds(text);
    EXPECT_FALSE(seconds.ok()) << "'" << text << "' was accepted as " << (seconds.ok() ? *seconds : 0.0);
    if (!seconds.ok()) {
      EXPECT_NE(seconds.error().find(std::string(text).substr(0, 1)), std::string::npos) << seconds.error();
    }
  }
}

TEST(ParseDurationSeconds, MessagesExplain) {
  ExpectErrorContains(ParseDurationSeconds("abc"), {"'abc'", "not a duration"});
  ExpectErrorContains(ParseDurationSeconds("-1"), {"'-1'", "negative"});
  ExpectErrorContains(ParseDurationSeconds("9000h"), {"'9000h'", "under a year"});
}

// ---------------------------------------------------------------------------------------------------------
// ApplyWandbSetting: sampling interval

TEST(ApplyWandbSetting, SamplingInterval) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_sampling_interval", "2").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 2.0);
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_sampling_interval", "500ms").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 0.5);
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_sampling_interval", "0.1").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 0.1);
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_sampling_interval", "1m").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 60.0);
}

TEST(ApplyWandbSetting, ZeroIntervalMeansTheDefault) {
  Settings s;
  s.interval_seconds = 3;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_sampling_interval", "0").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 15.0);
  s.interval_seconds = 3;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_sampling_interval", "0ms").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 15.0);
}

TEST(ApplyWandbSetting, IntervalBelowMinimumIsRejected) {
  for (std::string_view value : {"0.05", "99ms", "0.0999", "1ms", "1e-9"}) {
    Settings s;
    ExpectErrorContains(ApplyWandbSetting(s, "x_stats_sampling_interval", value),
                        {"x_stats_sampling_interval", value, "at least 0.1"});
  }
}

TEST(ApplyWandbSetting, BadIntervalNamesTheSetting) {
  for (std::string_view value : {"-1", "abc", "nan", "inf", "", "1e400"}) {
    Settings s;
    ExpectErrorContains(ApplyWandbSetting(s, "x_stats_sampling_interval", value),
                        {"x_stats_sampling_interval"});
    EXPECT_DOUBLE_EQ(s.interval_seconds, 15.0) << value;
  }
}

// Disabled: documents a bug (see the report). A rejected interval below the minimum is still written to
// Settings before the check, so a caller that reports the error and carries on samples every 50 ms.
TEST(ApplyWandbSetting, RejectedIntervalLeavesSettingsUnchanged) {
  Settings s;
  s.interval_seconds = 2;
  EXPECT_FALSE(ApplyWandbSetting(s, "x_stats_sampling_interval", "0.05").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 2.0);
}

// ---------------------------------------------------------------------------------------------------------
// ApplyWandbSetting: the other settings

TEST(ApplyWandbSetting, Pid) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_pid", "1234").ok());
  EXPECT_EQ(s.pid, 1234L);
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_pid", " 77 ").ok());
  EXPECT_EQ(s.pid, 77L);
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_pid", "0").ok());  // <= 0 disables process metrics
  EXPECT_EQ(s.pid, 0L);
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_pid", "-1").ok());
  EXPECT_EQ(s.pid, -1L);
  for (std::string_view bad : {"abc", "", "1.5", "12abc", "0x10"}) {
    Settings t;
    ExpectErrorContains(ApplyWandbSetting(t, "x_stats_pid", bad), {"x_stats_pid", "not an integer"});
    EXPECT_FALSE(t.pid.has_value()) << bad;
  }
}

TEST(ApplyWandbSetting, Booleans) {
  struct Case {
    std::string_view value;
    bool expected;
  };
  const Case cases[] = {{"true", true}, {"TRUE", true},    {"True", true},   {"1", true},      {"yes", true},
                        {"on", true},   {" true\n", true}, {"false", false}, {"FALSE", false}, {"0", false},
                        {"no", false},  {"off", false},    {"Off", false}};
  for (std::string_view name : {"x_stats_track_process_tree", "x_stats_no_cgroup", "x_stats_per_core_cpu"}) {
    for (const Case& c : cases) {
      Settings s;
      s.track_process_tree = !c.expected;
      s.no_cgroup = !c.expected;
      s.per_core_cpu = !c.expected;
      ASSERT_TRUE(ApplyWandbSetting(s, name, c.value).ok()) << name << "=" << c.value;
      const bool got = name == "x_stats_track_process_tree" ? s.track_process_tree
                       : name == "x_stats_no_cgroup"        ? s.no_cgroup
                                                            : s.per_core_cpu;
      EXPECT_EQ(got, c.expected) << name << "=" << c.value;
      // Only the named field changes.
      if (name != "x_stats_track_process_tree") {
        EXPECT_EQ(s.track_process_tree, !c.expected);
      }
      if (name != "x_stats_no_cgroup") {
        EXPECT_EQ(s.no_cgroup, !c.expected);
      }
      if (name != "x_stats_per_core_cpu") {
        EXPECT_EQ(s.per_core_cpu, !c.expected);
      }
    }
    for (std::string_view bad : {"maybe", "", "2", "t", "y", "truee"}) {
      Settings s;
      ExpectErrorContains(ApplyWandbSetting(s, name, bad), {name, "not a boolean"});
    }
  }
}

TEST(ApplyWandbSetting, DiskPathsAsJsonList) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", R"(["/", "/home/user", "/mnt/my files"])").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/", "/home/user", "/mnt/my files"}));
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", R"(  ["/data,with,commas"]  )").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/data,with,commas"}));
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", R"(["/caf\u00e9"])").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/caf\xc3\xa9"}));
}

TEST(ApplyWandbSetting, DiskPathsAsCommaList) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", "/,/data").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/", "/data"}));
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", " / , /data ,, /scratch ,").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/", "/data", "/scratch"}));
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", "/single").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/single"}));
}

TEST(ApplyWandbSetting, BadDiskPathsKeepThePreviousList) {
  struct Case {
    std::string_view value;
    std::string_view fragment;
  };
  for (const Case& c :
       {Case{"[]", "at least one path"}, Case{"", "at least one path"}, Case{" , , ", "at least one path"},
        Case{"[1]", "strings"}, Case{R"(["/", null])", "strings"}, Case{R"(["/",)", "JSON list"},
        Case{"[", "JSON list"}, Case{R"([["/"]])", "strings"}}) {
    Settings s;
    s.disk_paths = {"/keep"};
    ExpectErrorContains(ApplyWandbSetting(s, "x_stats_disk_paths", c.value),
                        {"x_stats_disk_paths", c.fragment});
    EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/keep"})) << c.value;
  }
}

// JSON that is not a list (an object, a quoted string) is refused, not split as a comma list.
TEST(ApplyWandbSetting, JsonThatIsNotAListIsRejected) {
  for (std::string_view value : {R"({"a": 1})", R"("/data")", R"({"a": 1, "b": 2})"}) {
    Settings s;
    EXPECT_FALSE(ApplyWandbSetting(s, "x_stats_disk_paths", value).ok()) << value;
    EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/"})) << value;
  }
}

// A path spelled twice would report its keys twice (disk./data.usageGB once per spelling).
TEST(ApplyWandbSetting, DiskPathsAreNormalisedAndRepeatsDropped) {
  Settings s;
  ASSERT_TRUE(
      ApplyWandbSetting(s, "x_stats_disk_paths", R"(["/data/", "/", "//", "/data", "/./data/.", "/"])").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/data", "/"}));
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_disk_paths", "/scratch,/scratch//,/home").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/scratch", "/home"}));
}

TEST(NormalizeDiskPaths, SpellingsOfOnePathBecomeOne) {
  struct Case {
    std::vector<std::string> paths;
    std::vector<std::string> expected;
  };
  for (const Case& c : {
           Case{{"/"}, {"/"}},
           Case{{"//", "/.", "/./", "///"}, {"/"}},
           Case{{"/data/", "/data", "//data", "/data//", "/./data/."}, {"/data"}},
           Case{{"/b", "/a", "/b/", "/a/"}, {"/b", "/a"}},  // the first spelling's order
           Case{{"/mnt/my files/", "/mnt/my files"}, {"/mnt/my files"}},
           // `..` stays: through a symlink, /data/.. need not be /.
           Case{{"/data/../x", "/x"}, {"/data/../x", "/x"}},
           Case{{"./data/", "data", "."}, {"data", "."}},
           Case{{"./", "."}, {"."}},
       }) {
    const auto normalised = NormalizeDiskPaths(c.paths);
    ASSERT_TRUE(normalised.ok()) << normalised.error();
    EXPECT_EQ(*normalised, c.expected) << ::testing::PrintToString(c.paths);
  }
}

TEST(NormalizeDiskPaths, EmptyPathsAndNulBytesAreErrors) {
  ExpectErrorContains(NormalizeDiskPaths({"/", ""}), {"empty"});
  ExpectErrorContains(NormalizeDiskPaths({std::string("/a\0b", 4)}), {"NUL"});
  ExpectErrorContains(NormalizeDiskPaths({}), {"at least one path"});
  Settings s;
  ExpectErrorContains(ApplyWandbSetting(s, "x_stats_disk_paths", R"(["/", ""])"),
                      {"x_stats_disk_paths", "empty"});
  ExpectErrorContains(ApplyWandbSetting(s, "x_stats_disk_paths", R"(["/a\u0000b"])"),
                      {"x_stats_disk_paths", "NUL"});
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/"}));
}

TEST(ApplyWandbSetting, Counts) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_cpu_count", "8").ok());
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_cpu_logical_count", "16").ok());
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_gpu_count", "0").ok());
  EXPECT_EQ(s.cpu_count, 8L);
  EXPECT_EQ(s.cpu_logical_count, 16L);
  EXPECT_EQ(s.gpu_count, 0L);
  for (std::string_view name : {"x_stats_cpu_count", "x_stats_cpu_logical_count", "x_stats_gpu_count"}) {
    Settings t;
    ExpectErrorContains(ApplyWandbSetting(t, name, "-1"), {name, "negative"});
    ExpectErrorContains(ApplyWandbSetting(t, name, "eight"), {name, "'eight' is not an integer"});
    ExpectErrorContains(ApplyWandbSetting(t, name, "2.5"), {name, "not an integer"});
    EXPECT_FALSE(t.cpu_count.has_value());
    EXPECT_FALSE(t.cpu_logical_count.has_value());
    EXPECT_FALSE(t.gpu_count.has_value());
  }
}

// A number too large for its type is out of range, not "not an integer".
TEST(ApplyWandbSetting, HugeIntegersAreOutOfRange) {
  for (std::string_view name :
       {"x_stats_pid", "x_stats_cpu_count", "x_stats_gpu_count", "x_stats_buffer_size"}) {
    Settings s;
    ExpectErrorContains(ApplyWandbSetting(s, name, "99999999999999999999"), {name, "out of range"});
  }
}

TEST(ApplyWandbSetting, GpuTypeIsVerbatim) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_gpu_type", "NVIDIA H100 80GB HBM3").ok());
  EXPECT_EQ(s.gpu_type, "NVIDIA H100 80GB HBM3");
}

TEST(ApplyWandbSetting, JsonSettingsAreValidatedAndKeptTrimmed) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_gpu_device_ids", " [0, 1] ").ok());
  EXPECT_EQ(s.other.at("x_stats_gpu_device_ids"), "[0, 1]");
  ASSERT_TRUE(
      ApplyWandbSetting(s, "x_stats_open_metrics_endpoints", R"({"node": "http://localhost:9100/metrics"})")
          .ok());
  EXPECT_EQ(s.other.at("x_stats_open_metrics_endpoints"), R"({"node": "http://localhost:9100/metrics"})");
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_open_metrics_filters", R"([".*DCGM.*"])").ok());
  EXPECT_EQ(s.other.at("x_stats_open_metrics_filters"), R"([".*DCGM.*"])");
  ASSERT_TRUE(
      ApplyWandbSetting(s, "x_stats_open_metrics_http_headers", R"({"Authorization": "Bearer x"})").ok());
  EXPECT_EQ(s.other.at("x_stats_open_metrics_http_headers"), R"({"Authorization": "Bearer x"})");
  EXPECT_EQ(s.other.size(), 4u);

  for (std::string_view name : {"x_stats_gpu_device_ids", "x_stats_open_metrics_endpoints",
                                "x_stats_open_metrics_filters", "x_stats_open_metrics_http_headers"}) {
    Settings t;
    ExpectErrorContains(ApplyWandbSetting(t, name, "5"), {name, "object or list"});
    ExpectErrorContains(ApplyWandbSetting(t, name, R"("text")"), {name, "object or list"});
    ExpectErrorContains(ApplyWandbSetting(t, name, "[0,"), {name, "not valid JSON"});
    ExpectErrorContains(ApplyWandbSetting(t, name, ""), {name, "not valid JSON"});
    EXPECT_TRUE(t.other.empty()) << name;
  }
}

TEST(ApplyWandbSetting, IntAndStringPassThroughSettings) {
  Settings s;
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_buffer_size", " 042 ").ok());
  EXPECT_EQ(s.other.at("x_stats_buffer_size"), "42");
  ExpectErrorContains(ApplyWandbSetting(s, "x_stats_buffer_size", "big"), {"x_stats_buffer_size", "'big'"});
  ExpectErrorContains(ApplyWandbSetting(s, "x_stats_buffer_size", "-5"), {"x_stats_buffer_size", "negative"});
  EXPECT_EQ(s.other.at("x_stats_buffer_size"), "42");

  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_neuron_monitor_config_path", "/etc/neuron monitor.json").ok());
  EXPECT_EQ(s.other.at("x_stats_neuron_monitor_config_path"), "/etc/neuron monitor.json");
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_dcgm_exporter", "http://localhost:9400/metrics").ok());
  EXPECT_EQ(s.other.at("x_stats_dcgm_exporter"), "http://localhost:9400/metrics");
  ASSERT_TRUE(ApplyWandbSetting(s, "x_stats_coreweave_metadata_base_url", "http://169.254.169.254").ok());
  EXPECT_EQ(s.other.at("x_stats_coreweave_metadata_base_url"), "http://169.254.169.254");
  ASSERT_TRUE(
      ApplyWandbSetting(s, "x_stats_coreweave_metadata_endpoint", "/api/v2/cloud-init/meta-data").ok());
  EXPECT_EQ(s.other.at("x_stats_coreweave_metadata_endpoint"), "/api/v2/cloud-init/meta-data");
}

TEST(ApplyWandbSetting, UnknownNamesListTheKnownOnes) {
  for (std::string_view name : {"x_stats_bogus", "", "X_STATS_PID", "x_stats_pid ", "x_stats_", "pidx"}) {
    Settings s;
    ExpectErrorContains(ApplyWandbSetting(s, name, "1"),
                        {"unknown setting", "x_stats_sampling_interval", "x_stats_disk_paths"});
  }
}

// Disabled: documents a mismatch (see the report). settings.hpp says `name` may come "with or without the
// x_stats_ prefix", but only the prefixed spelling is recognised.
TEST(ApplyWandbSetting, NameWithoutPrefixIsAccepted) {
  Settings s;
  EXPECT_TRUE(ApplyWandbSetting(s, "sampling_interval", "2").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 2.0);
}

TEST(ApplyWandbSetting, EveryKnownSettingAcceptsAValidValue) {
  const std::map<std::string_view, std::string_view> valid = {
      {"x_stats_sampling_interval", "1"},
      {"x_stats_pid", "42"},
      {"x_stats_track_process_tree", "false"},
      {"x_stats_no_cgroup", "true"},
      {"x_stats_disk_paths", R"(["/"])"},
      {"x_stats_cpu_count", "4"},
      {"x_stats_cpu_logical_count", "8"},
      {"x_stats_gpu_count", "1"},
      {"x_stats_gpu_type", "A100"},
      {"x_stats_per_core_cpu", "true"},
      {"x_stats_gpu_device_ids", "[0]"},
      {"x_stats_open_metrics_endpoints", "{}"},
      {"x_stats_open_metrics_filters", "[]"},
      {"x_stats_open_metrics_http_headers", "{}"},
      {"x_stats_buffer_size", "10"},
      {"x_stats_neuron_monitor_config_path", "/x"},
      {"x_stats_dcgm_exporter", "http://x"},
      {"x_stats_coreweave_metadata_base_url", "http://x"},
      {"x_stats_coreweave_metadata_endpoint", "/y"},
      {"x_label", "node-1"},
  };
  const auto names = KnownWandbSettingNames();
  EXPECT_EQ(names.size(), valid.size());
  std::set<std::string_view> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size()) << "duplicate setting names";
  for (std::string_view name : names) {
    EXPECT_TRUE(name.starts_with("x_stats_") || name == "x_label") << name;
    const auto it = valid.find(name);
    ASSERT_NE(it, valid.end()) << "no test value for " << name;
    Settings s;
    const auto status = ApplyWandbSetting(s, name, it->second);
    EXPECT_TRUE(status.ok()) << name << ": " << (status.ok() ? "" : status.error());
  }
}

// ---------------------------------------------------------------------------------------------------------
// ApplySetAssignment

TEST(ApplySetAssignment, Forms) {
  Settings s;
  ASSERT_TRUE(ApplySetAssignment(s, "x_stats_sampling_interval=2").ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 2.0);
  ASSERT_TRUE(ApplySetAssignment(s, " x_stats_pid =42").ok());
  EXPECT_EQ(s.pid, 42L);
  ASSERT_TRUE(ApplySetAssignment(s, "x_stats_gpu_type=a=b").ok());  // only the first '=' splits
  EXPECT_EQ(s.gpu_type, "a=b");
  ASSERT_TRUE(ApplySetAssignment(s, R"(x_stats_disk_paths=["/a","/b"])").ok());
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/a", "/b"}));
  ASSERT_TRUE(ApplySetAssignment(s, "x_stats_per_core_cpu=on").ok());
  EXPECT_TRUE(s.per_core_cpu);
}

TEST(ApplySetAssignment, Errors) {
  Settings s;
  ExpectErrorContains(ApplySetAssignment(s, "=5"), {"'=5'", "x_stats_NAME=VALUE"});
  ExpectErrorContains(ApplySetAssignment(s, "x_stats_pid"), {"'x_stats_pid'", "x_stats_NAME=VALUE"});
  ExpectErrorContains(ApplySetAssignment(s, ""), {"x_stats_NAME=VALUE"});
  ExpectErrorContains(ApplySetAssignment(s, "x_stats_pid="), {"x_stats_pid", "not an integer"});
  ExpectErrorContains(ApplySetAssignment(s, "x_stats_nope=1"), {"unknown setting 'x_stats_nope'"});
  ExpectErrorContains(ApplySetAssignment(s, "x_stats_sampling_interval=0.01"), {"at least 0.1"});
}

// ---------------------------------------------------------------------------------------------------------
// Environment variables

TEST(SettingNameFromEnvironment, Mapping) {
  EXPECT_EQ(SettingNameFromEnvironment("WANDB_X_STATS_SAMPLING_INTERVAL"), "x_stats_sampling_interval");
  EXPECT_EQ(SettingNameFromEnvironment("WANDB__STATS_PID"), "x_stats_pid");
  EXPECT_EQ(SettingNameFromEnvironment("WANDB_X_STATS_DISK_PATHS"), "x_stats_disk_paths");
  EXPECT_EQ(SettingNameFromEnvironment("WANDB__STATS_TRACK_PROCESS_TREE"), "x_stats_track_process_tree");
  EXPECT_EQ(SettingNameFromEnvironment("WANDB_X_STATS_OPEN_METRICS_HTTP_HEADERS"),
            "x_stats_open_metrics_http_headers");
}

TEST(SettingNameFromEnvironment, OthersAreNotSettings) {
  for (std::string_view variable : {"WANDB_X_STATS_", "WANDB__STATS_", "WANDB_API_KEY", "WANDB_PROJECT",
                                    "wandb_x_stats_pid", "X_STATS_PID", "WANDB_X_STATSPID", "WANDB_STATS_PID",
                                    "MY_WANDB_X_STATS_PID", "", "PATH", "WANDB_X_STATS"}) {
    EXPECT_EQ(SettingNameFromEnvironment(variable), std::nullopt) << variable;
  }
}

// W&B's x_label (the shared mode's label of every stats key): its two environment spellings, --set, and the
// checks of its value.
TEST(Label, FromEnvironmentAndSet) {
  EXPECT_EQ(SettingNameFromEnvironment("WANDB_X_LABEL"), "x_label");
  EXPECT_EQ(SettingNameFromEnvironment("WANDB__LABEL"), "x_label");
  EXPECT_EQ(SettingNameFromEnvironment("WANDB_LABEL"), std::nullopt);
  EXPECT_EQ(SettingNameFromEnvironment("WANDB_X_LABELS"), std::nullopt);
  Settings s;
  EXPECT_EQ(s.label, "");
  ASSERT_TRUE(ApplyEnvironment(s, {"WANDB_X_LABEL=node-3"}).ok());
  EXPECT_EQ(s.label, "node-3");
  ASSERT_TRUE(ApplyEnvironment(s, {"WANDB__LABEL=rank 7 \xc3\xa9"}).ok());
  EXPECT_EQ(s.label, "rank 7 \xc3\xa9");
  ASSERT_TRUE(ApplySetAssignment(s, "x_label=gpu-node/2").ok());
  EXPECT_EQ(s.label, "gpu-node/2");
  ASSERT_TRUE(ApplySetAssignment(s, "x_label=").ok());  // W&B's "no label"
  EXPECT_EQ(s.label, "");
  // Unknown x_ settings are refused under their own name, not as x_stats_x_...
  ExpectErrorContains(ApplySetAssignment(s, "x_labels=a"), {"unknown setting 'x_labels'"});
}

TEST(Label, RefusedValues) {
  Settings s;
  ExpectErrorContains(ApplyWandbSetting(s, "x_label", std::string(129, 'a')),
                      {"x_label", "at most 128 bytes"});
  ExpectErrorContains(ApplyWandbSetting(s, "x_label", "bad\xff"), {"x_label", "UTF-8"});
  ExpectErrorContains(ApplyWandbSetting(s, "x_label", "two\nlines"), {"x_label", "control"});
  ExpectErrorContains(ApplyWandbSetting(s, "x_label", std::string("nul\0", 4)), {"x_label", "control"});
  ExpectErrorContains(ApplyEnvironment(s, {"WANDB_X_LABEL=tab\there"}), {"WANDB_X_LABEL", "control"});
  EXPECT_EQ(s.label, "");
  EXPECT_TRUE(ValidateLabel(std::string(128, 'a')).ok());
}

TEST(ApplyEnvironment, AppliesOnlyStatsVariables) {
  Settings s;
  const std::vector<std::string> environment = {
      "PATH=/usr/local/bin:/usr/bin",
      "WANDB_X_STATS_SAMPLING_INTERVAL=5",
      "WANDB__STATS_PID=77",
      R"(WANDB_X_STATS_DISK_PATHS=["/","/data"])",
      "WANDB_API_KEY=not-a-setting",
      "HOME=/root",
      "NOEQUALSSIGN",
      "WANDB_X_STATS_=ignored",
      "WANDB__STATS_PER_CORE_CPU=true",
  };
  const auto status = ApplyEnvironment(s, environment);
  ASSERT_TRUE(status.ok()) << status.error();
  EXPECT_DOUBLE_EQ(s.interval_seconds, 5.0);
  EXPECT_EQ(s.pid, 77L);
  EXPECT_EQ(s.disk_paths, (std::vector<std::string>{"/", "/data"}));
  EXPECT_TRUE(s.per_core_cpu);
  EXPECT_TRUE(s.track_process_tree);
  EXPECT_TRUE(s.other.empty());
}

TEST(ApplyEnvironment, LaterEntriesWin) {
  Settings s;
  ASSERT_TRUE(
      ApplyEnvironment(s, {"WANDB__STATS_SAMPLING_INTERVAL=3", "WANDB_X_STATS_SAMPLING_INTERVAL=4"}).ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 4.0);
}

TEST(ApplyEnvironment, EmptyEnvironment) {
  Settings s;
  ASSERT_TRUE(ApplyEnvironment(s, {}).ok());
  EXPECT_DOUBLE_EQ(s.interval_seconds, 15.0);
}

TEST(ApplyEnvironment, ErrorsNameTheVariable) {
  Settings s;
  ExpectErrorContains(ApplyEnvironment(s, {"WANDB_X_STATS_SAMPLING_INTERVAL=abc"}),
                      {"WANDB_X_STATS_SAMPLING_INTERVAL", "x_stats_sampling_interval", "'abc'"});
  ExpectErrorContains(ApplyEnvironment(s, {"WANDB__STATS_PID="}), {"WANDB__STATS_PID", "x_stats_pid"});
  ExpectErrorContains(ApplyEnvironment(s, {"WANDB_X_STATS_FUTURE_THING=1"}),
                      {"WANDB_X_STATS_FUTURE_THING", "unknown setting 'x_stats_future_thing'"});
}

}  // namespace
}  // namespace runmon
