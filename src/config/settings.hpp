// Sampler settings, and the parsers that fill them from runmon's flags, W&B's setting names
// (`--set x_stats_sampling_interval=1`) and W&B's environment variables (WANDB_X_STATS_*, WANDB__STATS_*),
// and W&B's x_label (WANDB_X_LABEL, WANDB__LABEL), the shared mode's label that a run log's stats keys end
// with ("/l:<label>").
// Every parser here is pure and fuzzed: bad input is an Error with a message naming the setting.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon {

inline constexpr double kMinIntervalSeconds = 0.1;
inline constexpr double kDefaultIntervalSeconds = 15.0;

struct Settings {
  double interval_seconds = kDefaultIntervalSeconds;
  // The monitored process; unset means the caller decides (runmon sample: its parent). <= 0 disables
  // process metrics (W&B's x_stats_pid semantics).
  std::optional<long> pid;
  bool track_process_tree = true;
  bool no_cgroup = false;
  bool per_core_cpu = false;
  std::vector<std::string> disk_paths{"/"};
  // Metadata overrides (W&B: metadata only).
  std::optional<long> cpu_count;
  std::optional<long> cpu_logical_count;
  std::optional<long> gpu_count;
  std::optional<std::string> gpu_type;
  // W&B's x_label: every key of the run log's stats records gets "/l:<label>" (empty: none). Checked by
  // ValidateLabel.
  std::string label;
  // Accepted W&B settings that belong to collectors other than the host ones, kept verbatim (JSON text)
  // for the collectors that read them.
  std::map<std::string, std::string> other;
};

// "0.5", "500ms", "15s", "2m", "1.5h" -> seconds. Rejects negatives, NaN, infinities and garbage.
Result<double> ParseDurationSeconds(std::string_view text);

// The paths whose filesystems are reported, as they will be spelled in keys (disk.{path}.usageGB): `//`,
// `.` components and trailing slashes are dropped, so `/data/` and `/data` are one path, and a path given
// twice is kept once, where it first came. `..` stays (through a symlink /data/.. need not be /). Errors:
// no paths, an empty path, a NUL byte (a JSON list can spell one; no system call can take it).
Result<std::vector<std::string>> NormalizeDiskPaths(const std::vector<std::string>& paths);

// x_label's value: at most kMaxLabelBytes bytes of valid UTF-8 without control characters ("" is no label).
// W&B takes any string; these bounds keep a key readable and its record small.
inline constexpr size_t kMaxLabelBytes = 128;
Status ValidateLabel(std::string_view label);

// Applies one W&B setting, `name` with or without the `x_stats_` prefix already present
// (e.g. "x_stats_sampling_interval", "1"; "x_label" is one of W&B's other x_ settings). Unknown names and bad
// values are errors.
Status ApplyWandbSetting(Settings& settings, std::string_view name, std::string_view value);

// Splits "x_stats_NAME=VALUE" and applies it.
Status ApplySetAssignment(Settings& settings, std::string_view assignment);

// Maps an environment variable name to a setting name: WANDB_X_STATS_FOO and WANDB__STATS_FOO ->
// x_stats_foo, WANDB_X_LABEL and WANDB__LABEL -> x_label; anything else -> nullopt.
std::optional<std::string> SettingNameFromEnvironment(std::string_view variable);

// Applies every WANDB_X_STATS_* / WANDB__STATS_* (and x_label) entry of `environ`-style "NAME=VALUE" strings.
Status ApplyEnvironment(Settings& settings, const std::vector<std::string>& environment);

// The W&B setting names runmon understands, for help and docs.
std::vector<std::string_view> KnownWandbSettingNames();

}  // namespace runmon
