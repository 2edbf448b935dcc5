// neuron-monitor's config and its private file (neuron_monitor_config.hpp). The file is created with
// O_EXCL | O_NOFOLLOW inside the fresh directory, written whole and closed before neuron-monitor starts.
#include "collectors/trainium/neuron_monitor_config.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace runmon::trainium {

int NeuronMonitorPeriodSeconds(double interval_seconds) {
  if (!(interval_seconds >= 1)) return 1;
  return static_cast<int>(std::min(std::floor(interval_seconds), 86400.0));
}

std::string NeuronMonitorConfigText(double interval_seconds) {
  const auto groups = [](std::initializer_list<const char*> names) {
    nlohmann::json list = nlohmann::json::array();
    for (const char* name : names) list.push_back({{"type", name}});
    return list;
  };
  const nlohmann::json config = {
      {"period", fmt::format("{}s", NeuronMonitorPeriodSeconds(interval_seconds))},
      {"neuron_runtimes",
       {{{"tag_filter", ".*"},
         {"metrics", groups({"neuroncore_counters", "memory_used", "neuron_runtime_vcpu_usage"})}}}},
      {"system_metrics", groups({"vcpu_usage", "memory_info", "neuron_hw_counters"})}};
  return config.dump(2) + "\n";
}

Result<PrivateConfigFile> PrivateConfigFile::Create(const std::filesystem::path& temp_dir,
                                                    const std::string& text) {
  std::string pattern = (temp_dir / "runmon-neuron-monitor-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Error{fmt::format("cannot make a directory in {}: {}", temp_dir.string(), std::strerror(errno))};
  }
  const std::filesystem::path directory = pattern;
  PrivateConfigFile file(directory / "neuron-monitor.json");
  const int fd = ::open(file.path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Error{fmt::format("cannot create {}: {}", file.path_.string(), std::strerror(errno))};
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      return Error{fmt::format("cannot write {}: {}", file.path_.string(), std::strerror(error))};
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return Error{fmt::format("cannot write {}: {}", file.path_.string(), std::strerror(errno))};
  }
  return file;
}

PrivateConfigFile::PrivateConfigFile(PrivateConfigFile&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

PrivateConfigFile::~PrivateConfigFile() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
  std::filesystem::remove(path_.parent_path(), ignored);
}

}  // namespace runmon::trainium
