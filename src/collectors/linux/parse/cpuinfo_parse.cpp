// /proc/cpuinfo and os-release files (shell quoting). Every architecture's kernel prints cpuinfo its own
// way ("key\t: value" lines, mostly one block per logical CPU):
//  - the CPU count: one "processor : N" line per CPU (x86, ARM, PowerPC, RISC-V, MIPS, LoongArch) or one
//    "processor N: version = ..." line (s390); else only a declared total ("# processors" on s390,
//    "ncpus active" on sparc); old ARM kernels (ARMv6) print no count at all, which is left to sysfs.
//  - the model, best first: "model name" (x86, ARM32) or LoongArch's "Model Name"; "Processor" (old ARM),
//    "cpu model" (MIPS), "cpu" (PowerPC, sparc) or "uarch" (RISC-V); the core named by "CPU implementer"
//    and "CPU part" (ARM64 prints nothing else about the CPU); "Hardware" (the ARM board or SoC); "isa"
//    (RISC-V) or "CPU Family" (LoongArch); "vendor_id" (s390's "IBM/S390").
// Physical cores are distinct (physical id, core id) pairs where the file has them (x86, s390); elsewhere
// the count is left to the sysfs topology reader.
#include <set>
#include <utility>

#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

namespace runmon {
namespace {

// Kernels support at most 8192 CPUs today; a declared count far past that is not a count.
constexpr uint64_t kMaxDeclaredCpus = 1 << 20;

// Model sources in order of preference (lower is better).
enum ModelRank : int { kModelName, kCpuName, kArmCore, kBoard, kIsa, kVendor, kNoModel };

ModelRank RankOfModelKey(std::string_view key) {
  if (key == "model name" || key == "Model Name") return kModelName;
  if (key == "Processor" || key == "cpu model" || key == "cpu" || key == "uarch") return kCpuName;
  if (key == "Hardware") return kBoard;
  if (key == "isa" || key == "CPU Family") return kIsa;
  if (key == "vendor_id") return kVendor;
  return kNoModel;
}

struct ArmPart {
  unsigned implementer;
  unsigned part;
  std::string_view name;
};

// The cores found in servers, boards and phones (the implementer and part numbers of the Main ID
// register, as Arm's and the vendors' manuals give them).
constexpr std::pair<unsigned, std::string_view> kArmImplementers[] = {
    {0x41, "ARM"},    {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"}, {0x48, "HiSilicon"},
    {0x4e, "NVIDIA"}, {0x51, "Qualcomm"}, {0x61, "Apple"},  {0xc0, "Ampere"},
};
constexpr ArmPart kArmParts[] = {
    {0x41, 0xb36, "ARM1136"},     {0x41, 0xb56, "ARM1156"},     {0x41, 0xb76, "ARM1176"},
    {0x41, 0xc05, "Cortex-A5"},   {0x41, 0xc07, "Cortex-A7"},   {0x41, 0xc08, "Cortex-A8"},
    {0x41, 0xc09, "Cortex-A9"},   {0x41, 0xc0f, "Cortex-A15"},  {0x41, 0xd01, "Cortex-A32"},
    {0x41, 0xd03, "Cortex-A53"},  {0x41, 0xd04, "Cortex-A35"},  {0x41, 0xd05, "Cortex-A55"},
    {0x41, 0xd07, "Cortex-A57"},  {0x41, 0xd08, "Cortex-A72"},  {0x41, 0xd09, "Cortex-A73"},
    {0x41, 0xd0a, "Cortex-A75"},  {0x41, 0xd0b, "Cortex-A76"},  {0x41, 0xd0c, "Neoverse-N1"},
    {0x41, 0xd0d, "Cortex-A77"},  {0x41, 0xd40, "Neoverse-V1"}, {0x41, 0xd41, "Cortex-A78"},
    {0x41, 0xd44, "Cortex-X1"},   {0x41, 0xd46, "Cortex-A510"}, {0x41, 0xd47, "Cortex-A710"},
    {0x41, 0xd48, "Cortex-X2"},   {0x41, 0xd49, "Neoverse-N2"}, {0x41, 0xd4a, "Neoverse-E1"},
    {0x41, 0xd4f, "Neoverse-V2"}, {0x41, 0xd80, "Cortex-A520"}, {0x41, 0xd81, "Cortex-A720"},
    {0x41, 0xd82, "Cortex-X4"},   {0x41, 0xd84, "Neoverse-V3"}, {0x41, 0xd8e, "Neoverse-N3"},
    {0x43, 0x0af, "ThunderX2"},   {0x46, 0x001, "A64FX"},       {0x48, 0xd01, "Kunpeng-920"},
    {0x4e, 0x003, "Denver 2"},    {0x4e, 0x004, "Carmel"},      {0xc0, 0xac3, "Ampere-1"},
    {0xc0, 0xac4, "Ampere-1a"},
};

// "0x41" -> 0x41.
std::optional<unsigned> ParseHex(std::string_view value) {
  if (!value.starts_with("0x") || value.size() > 10) return std::nullopt;
  unsigned result = 0;
  const auto [end, ec] = std::from_chars(value.data() + 2, value.data() + value.size(), result, 16);
  if (value.size() == 2 || ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return result;
}

std::string ArmCoreName(std::string_view implementer_text, std::string_view part_text) {
  const auto implementer = ParseHex(implementer_text);
  const auto part = ParseHex(part_text);
  if (!implementer || !part) return {};
  for (const auto& [id, vendor] : kArmImplementers) {
    if (id != *implementer) continue;
    for (const ArmPart& known : kArmParts) {
      if (known.implementer == id && known.part == *part)
        return std::string(vendor) + " " + std::string(known.name);
    }
  }
  return {};
}

}  // namespace

Result<CpuInfo> ParseCpuinfo(std::string_view text) {
  CpuInfo info;
  ModelRank model_rank = kNoModel;
  auto offer_model = [&](ModelRank rank, std::string_view value) {
    if (rank < model_rank && !value.empty()) {
      info.model_name = std::string(value);
      model_rank = rank;
    }
  };
  unsigned entries = 0;
  uint64_t declared = 0;
  std::string_view implementer, part;
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
    if (key == "processor" ||
        (key.starts_with("processor ") && key.size() > 10 && key[10] >= '0' && key[10] <= '9')) {
      ++entries;
    } else if (key == "# processors" || key == "ncpus active") {
      if (const auto count = text::ParseU64(value); count && *count <= kMaxDeclaredCpus) declared = *count;
    } else if (key == "CPU implementer") {
      if (implementer.empty()) implementer = value;
    } else if (key == "CPU part") {
      if (part.empty()) part = value;
    } else if (key == "physical id") {
      physical_id = value;
    } else if (key == "core id") {
      core_id = value;
    } else {
      offer_model(RankOfModelKey(key), value);
    }
  }
  end_block();
  offer_model(kArmCore, ArmCoreName(implementer, part));
  info.logical_count = entries != 0 ? entries : static_cast<unsigned>(declared);
  info.physical_count = static_cast<unsigned>(cores.size());
  if (info.logical_count == 0 && info.model_name.empty())
    return Error{"no processor entries and no CPU model"};
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
