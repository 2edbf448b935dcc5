// /proc/cpuinfo (blocks of "key\t: value" lines, one per logical CPU; s390x lists "processor N:" lines)
// and os-release files (shell quoting). Arm kernels
// have no "model name" or "physical id"; the model then comes from "Hardware"/"Processor" when present
// and the physical count is left to the sysfs topology reader.
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

#include <set>
#include <utility>

namespace runmon {

Result<CpuInfo> ParseCpuinfo(std::string_view text) {
  CpuInfo info;
  std::string fallback_model;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id, core_id;
  auto end_block = [&] {
    if (!physical_id.empty() && !core_id.empty()) cores.emplace(physical_id, core_id);
    physical_id.clear();
    core_id.clear();
  };
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    if (text::Trim(line).empty()) {
      end_block();
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = text::Trim(line.substr(0, colon));
    const std::string_view value = text::Trim(line.substr(colon + 1));
    // s390x writes one "processor N: version = ..." line per CPU instead of a "processor : N" block.
    if (key == "processor" ||
        (key.starts_with("processor ") && key.size() > 10 && key[10] >= '0' && key[10] <= '9')) {
      ++info.logical_count;
    } else if (key == "model name" && info.model_name.empty()) {
      info.model_name = value;
    } else if ((key == "Hardware" || key == "cpu model" || key == "Processor" || key == "cpu") &&
               fallback_model.empty()) {
      fallback_model = value;
    } else if (key == "physical id") {
      physical_id = value;
    } else if (key == "core id") {
      core_id = value;
    }
  }
  end_block();
  if (info.model_name.empty()) info.model_name = fallback_model;
  info.physical_count = static_cast<unsigned>(cores.size());
  if (info.logical_count == 0) return Error{"/proc/cpuinfo: no processor entries"};
  return info;
}

std::optional<std::string> FindOsReleaseValue(std::string_view text, std::string_view key) {
  text::Lines lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    line = text::Trim(line);
    if (line.size() <= key.size() || !line.starts_with(key) || line[key.size()] != '=') continue;
    std::string_view value = line.substr(key.size() + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      return std::string(value.substr(1, value.size() - 2));  // single quotes: no escapes
    }
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    std::string out;
    for (size_t i = 0; i < value.size(); ++i) {
      if (value[i] == '\\' && i + 1 < value.size() &&
          std::string_view("\"\\$`").find(value[i + 1]) != std::string_view::npos) {
        ++i;
      }
      out += value[i];
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace runmon
