// The configuration runmon gives neuron-monitor (accelerators.md §2.2): every runtime (tag_filter ".*")
// with the groups runmon reads (not execution_stats: nothing of it is read, and neuron-monitor need not
// collect it), the system groups, and a period that follows the sampling interval.
// neuron-monitor counts whole seconds, so the period is the interval rounded down, and at least 1 s: with a
// sub-second interval runmon samples the latest document at its own pace (W&B writes "0s" then). The file
// is runmon's own: a directory made for this process alone (mode 0700) under the temporary directory,
// holding the config (mode 0600), both removed when the collector ends. W&B writes one fixed name in TMPDIR
// that concurrent runs overwrite; a name chosen by mkdtemp cannot be raced or pre-created by another user.
#pragma once

#include <filesystem>
#include <string>

#include "core/result.hpp"

namespace runmon::trainium {

// The period neuron-monitor is given, in whole seconds.
int NeuronMonitorPeriodSeconds(double interval_seconds);

// The config's JSON text for a sampling interval.
std::string NeuronMonitorConfigText(double interval_seconds);

// A private config file, removed (with its directory) on destruction.
class PrivateConfigFile {
 public:
  // Writes `text` into a new private directory under `temp_dir`.
  static Result<PrivateConfigFile> Create(const std::filesystem::path& temp_dir, const std::string& text);
  PrivateConfigFile(PrivateConfigFile&& other) noexcept;
  PrivateConfigFile& operator=(PrivateConfigFile&&) = delete;
  PrivateConfigFile(const PrivateConfigFile&) = delete;
  ~PrivateConfigFile();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit PrivateConfigFile(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;  // empty once moved from
};

}  // namespace runmon::trainium
