// The run's share of each AMD GPU from DRM fdinfo and KFD (see amdgpu_process_share.hpp).
#include "collectors/amd/amdgpu_process_share.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "collectors/amd/amdgpu_sysfs_parse.hpp"
#include "collectors/amd/kfd_parse.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/parse/text.hpp"

namespace runmon::amd {
namespace {

constexpr std::string_view kDriDirectory = "/dev/dri/";
constexpr std::string_view kAmdgpuDriver = "amdgpu";
constexpr double kNanosecondsPerSecond = 1e9;

std::optional<long> ParsePid(std::string_view name) {
  const auto value = text::ParseU64(name);
  if (!value || *value == 0 || *value > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    return std::nullopt;
  return static_cast<long>(*value);
}

}  // namespace

struct ProcessShare::CardSum {
  bool used = false;
  uint64_t vram_bytes = 0;
  bool vram_known = false;
  double busy_ns = 0;       // valid deltas of the run's clients' counters
  double busy_percent = 0;  // old kernels' ring percentages
  bool busy_known = false;
};

std::map<std::string, uint32_t> ReadKfdGpuIds(const HostPaths& paths) {
  std::map<std::string, uint32_t> ids;
  std::set<std::string> ambiguous;
  const auto nodes_dir = paths.Sys("class/kfd/kfd/topology/nodes");
  const auto nodes = ListDirectory(nodes_dir);
  if (!nodes) return ids;
  for (const auto& node : *nodes) {
    const auto id_text = ReadFileToString(nodes_dir / node / "gpu_id");
    if (!id_text) continue;
    const auto id = ParseSysfsUnsigned(*id_text);
    if (!id || *id == 0 || *id > UINT32_MAX) continue;
    const auto properties_text = ReadFileToString(nodes_dir / node / "properties");
    if (!properties_text) continue;
    const auto properties = ParseKfdNodeProperties(*properties_text);
    if (!properties) continue;
    const auto address = KfdNodePciAddress(*properties);
    if (!address) continue;
    if (!ids.emplace(*address, static_cast<uint32_t>(*id)).second) ambiguous.insert(*address);
  }
  for (const auto& address : ambiguous) ids.erase(address);
  return ids;
}

ProcessShare::ProcessShare(HostPaths paths, RunTree tree)
    : paths_(std::move(paths)), tree_(std::move(tree)) {}

void ProcessShare::ResolveGpuIds(std::span<const CardAddress> cards) {
  std::vector<std::string> addresses;
  for (const auto& card : cards) addresses.push_back(card.pci_address);
  if (addresses == card_addresses_ && gpu_ids_.size() == cards.size()) return;
  card_addresses_ = std::move(addresses);
  card_index_.clear();
  gpu_ids_.assign(cards.size(), std::nullopt);
  std::optional<std::map<std::string, uint32_t>> topology;
  for (size_t i = 0; i < cards.size(); ++i) {
    card_index_.emplace(cards[i].pci_address, i);
    gpu_ids_[i] = cards[i].kfd_gpu_id;
    if (gpu_ids_[i]) continue;
    if (!topology) topology = ReadKfdGpuIds(paths_);
    if (auto it = topology->find(cards[i].pci_address); it != topology->end()) gpu_ids_[i] = it->second;
  }
}

bool ProcessShare::StillThere(const Process& process) const {
  const auto stat = ReadPidStat(paths_, process.pid);
  return stat && stat->start_time_ticks == process.start_time_ticks && !HasExited(*stat);
}

void ProcessShare::Forget(long pid) {
  processes_.erase(pid);
  tree_.Leave(pid);
}

bool ProcessShare::Track(long pid, std::optional<long> parent) {
  const auto stat = ReadPidStat(paths_, pid);
  if (!stat || HasExited(*stat)) return false;
  bool joined = false;
  if (parent) {
    if (!tree_.Join(pid, *stat, *parent).ok()) return false;
    joined = true;
  } else {
    // Found by RunTree::Contains: a member whether or not its parent is recorded yet.
    joined = tree_.Join(pid, *stat, stat->ppid).ok();
  }
  Process& process = processes_[pid];
  process = Process{};
  process.pid = pid;
  process.start_time_ticks = stat->start_time_ticks;
  process.joined = joined;
  ScanFds(process);
  return true;
}

void ProcessShare::ScanFds(Process& process) {
  const auto fd_dir = paths_.Proc(fmt::format("{}/fd", process.pid));
  const auto names = ListDirectory(fd_dir);
  if (!names) return;
  // readlinkat against the directory: one system call per descriptor, no path walk from the root.
  const int dir = ::open(fd_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  std::vector<DrmFile> found;
  char target[64];
  for (const auto& name : *names) {
    const auto fd = text::ParseU64(name);
    if (!fd || *fd > static_cast<uint64_t>(std::numeric_limits<int>::max())) continue;
    const ssize_t length = ::readlinkat(dir, name.c_str(), target, sizeof(target));
    if (length <= 0 || !std::string_view(target, static_cast<size_t>(length)).starts_with(kDriDirectory))
      continue;
    const int number = static_cast<int>(*fd);
    auto known = std::find_if(process.drm_files.begin(), process.drm_files.end(),
                              [&](const DrmFile& file) { return file.fd == number; });
    if (known != process.drm_files.end()) {
      found.push_back(std::move(*known));  // kept open: the kernel shows whatever file the number names now
      continue;
    }
    found.push_back(DrmFile{
        number,
        KeptOpenFile(paths_.Proc(fmt::format("{}/fdinfo/{}", process.pid, number)), Generated::kWhole),
        std::nullopt});
  }
  ::close(dir);
  process.drm_files = std::move(found);
}

void ProcessShare::Walk() {
  std::vector<long> gone;
  for (const auto& [pid, process] : processes_) {
    if (!StillThere(process)) gone.push_back(pid);
  }
  for (long pid : gone) Forget(pid);
  for (auto& [pid, process] : processes_) ScanFds(process);

  const long root = tree_.root();
  if (processes_.count(root) == 0 && !Track(root, /*parent=*/0)) return;
  if (!tree_.whole_tree()) return;
  std::deque<long> queue;
  for (const auto& [pid, process] : processes_) {
    if (process.joined) queue.push_back(pid);
  }
  std::set<long> visited;
  while (!queue.empty()) {
    const long pid = queue.front();
    queue.pop_front();
    if (!visited.insert(pid).second) continue;
    const auto task_dir = paths_.Proc(fmt::format("{}/task", pid));
    const auto threads = ListDirectory(task_dir);
    if (!threads) continue;
    for (const auto& thread : *threads) {
      const auto list = ReadFileToString(task_dir / thread / "children");
      if (!list) continue;
      const auto children = ParseChildrenList(*list);
      if (!children) continue;
      for (long child : *children) {
        auto known = processes_.find(child);
        if (known == processes_.end()) {
          if (Track(child, pid)) queue.push_back(child);
          continue;
        }
        if (known->second.joined) continue;
        // Tracked from the KFD list before its parent was recorded: it joins now, and so can its children.
        const auto stat = ReadPidStat(paths_, child);
        if (stat && stat->start_time_ticks == known->second.start_time_ticks &&
            tree_.Join(child, *stat, pid).ok()) {
          known->second.joined = true;
          queue.push_back(child);
        }
      }
    }
  }
}

void ProcessShare::FollowKfd() {
  kfd_pids_.clear();
  const auto names = ListDirectory(paths_.Sys("class/kfd/kfd/proc"));
  if (!names) return;
  for (const auto& name : *names) {
    const auto pid = ParsePid(name);
    if (!pid) continue;
    kfd_pids_.insert(*pid);
    if (processes_.count(*pid) == 0 && tree_.Contains(*pid)) Track(*pid, std::nullopt);
  }
}

void ProcessShare::CountClient(const ClientKey& key, const DrmFdinfo& info, CardSum& sum,
                               std::map<ClientKey, ClientReading>& counters,
                               std::optional<double> elapsed_ns) {
  if (counters.count(key) != 0) return;  // counted already, through another descriptor or process
  sum.used = true;
  if (info.vram_bytes) {
    sum.vram_bytes += *info.vram_bytes;
    sum.vram_known = true;
  }
  ClientReading now;
  now.has_vram = info.vram_bytes.has_value();
  for (const auto& engine : info.engines) {
    const bool gfx = engine.name == "gfx";
    if (!gfx && engine.name != "compute") continue;
    if (engine.percent) {
      sum.busy_percent += engine.busy_percent;
      sum.busy_known = true;
      continue;
    }
    auto& counter = gfx ? now.gfx_ns : now.compute_ns;
    counter = counter.value_or(0) + engine.busy_ns;
  }
  const auto previous = last_counters_.find(key);
  ClientReading kept = now;
  const auto follow = [&](std::optional<uint64_t> current, std::optional<uint64_t> before,
                          std::optional<uint64_t>& stored) {
    if (!current) {
      stored = before;
      return;
    }
    if (previous == last_counters_.end()) return;  // a client new this tick: nothing to compare with
    // The engine had no line last tick: it had not been busy (the driver leaves out engines at 0 ns).
    const uint64_t base = before.value_or(0);
    if (*current < base) {
      stored = base;  // went down: the larger value stands until the counter catches up
      return;
    }
    const double delta = static_cast<double>(*current - base);
    if (elapsed_ns && delta <= *elapsed_ns) {
      sum.busy_ns += delta;
      sum.busy_known = true;
    }
  };
  const ClientReading before = previous == last_counters_.end() ? ClientReading{} : previous->second;
  follow(now.gfx_ns, before.gfx_ns, kept.gfx_ns);
  follow(now.compute_ns, before.compute_ns, kept.compute_ns);
  counters.emplace(key, kept);
}

bool ProcessShare::ReadProcess(Process& process, std::span<const CardAddress> cards,
                               std::vector<CardSum>& sums, std::map<ClientKey, ClientReading>& counters,
                               std::optional<double> elapsed_ns, bool every_descriptor) {
  std::vector<bool> fdinfo_vram(cards.size(), false);
  bool lost_file = false;
  for (auto it = process.drm_files.begin(); it != process.drm_files.end();) {
    DrmFile& file = *it;
    if (!every_descriptor && file.client) {
      if (const auto counted = counters.find(*file.client); counted != counters.end()) {
        // Read through another descriptor this tick: the same client, unless the number was reused for
        // another one since the walk (seen at the next walk).
        const auto card = card_index_.find(file.client->first);
        if (counted->second.has_vram && card != card_index_.end()) fdinfo_vram[card->second] = true;
        ++it;
        continue;
      }
    }
    ++fdinfo_reads_;
    const auto text = file.fdinfo.Read(scratch_);
    if (!text || text->empty()) {
      // Closed, or the process is gone (told apart below); a later walk finds what it opens next.
      lost_file = true;
      it = process.drm_files.erase(it);
      continue;
    }
    const auto info = ParseDrmFdinfo(*text);
    if (info && !info->IsDrmClient()) {
      it = process.drm_files.erase(it);  // the number now names another kind of file
      continue;
    }
    ++it;
    file.client.reset();
    if (!info) continue;  // not what the driver writes: left out this tick
    if (!info->driver.empty() && info->driver != kAmdgpuDriver) continue;
    const auto card = card_index_.find(info->pci_address);
    if (card == card_index_.end()) continue;
    const std::optional<uint64_t> id = info->client_id ? info->client_id : info->pasid;
    if (!id) continue;  // cannot be told apart from the same client seen through another descriptor
    file.client = ClientKey{info->pci_address, *id};
    if (info->vram_bytes) fdinfo_vram[card->second] = true;
    CountClient(*file.client, *info, sums[card->second], counters, elapsed_ns);
  }
  if (lost_file && !StillThere(process)) return false;
  if (kfd_pids_.count(process.pid) == 0) return true;
  // Nothing read from this process's own files may have told that its PID now names another process (one
  // without DRM files is only checked at walks): KFD's files are keyed by PID alone.
  if (!lost_file && !StillThere(process)) return false;
  for (size_t i = 0; i < cards.size(); ++i) {
    if (fdinfo_vram[i] || !gpu_ids_[i]) continue;
    auto [file, added] = process.kfd_vram.try_emplace(*gpu_ids_[i]);
    if (added) {
      file->second =
          KeptOpenFile(paths_.Sys(fmt::format("class/kfd/kfd/proc/{}/vram_{}", process.pid, *gpu_ids_[i])),
                       Generated::kWhole);
    }
    const auto text = file->second.Read(scratch_);
    if (!text) continue;
    const auto bytes = ParseSysfsUnsigned(*text);
    if (!bytes || *bytes == 0) continue;  // no VRAM there: not a sign the run uses that card
    sums[i].used = true;
    sums[i].vram_bytes += *bytes;
    sums[i].vram_known = true;
  }
  return true;
}

std::vector<std::optional<TreeShare>> ProcessShare::Sample(std::span<const CardAddress> cards,
                                                           double monotonic_seconds) {
  std::vector<std::optional<TreeShare>> shares(cards.size());
  if (!tree_.watching()) return shares;
  ResolveGpuIds(cards);
  tree_.BeginLookups();
  const bool walk = !last_walk_seconds_ || monotonic_seconds - *last_walk_seconds_ >= kWalkSeconds;
  if (walk) {
    Walk();
    last_walk_seconds_ = monotonic_seconds;
  }
  FollowKfd();
  tree_.EndLookups();

  std::optional<double> elapsed_ns;
  if (last_seconds_ && monotonic_seconds > *last_seconds_)
    elapsed_ns = (monotonic_seconds - *last_seconds_) * kNanosecondsPerSecond;
  std::vector<CardSum> sums(cards.size());
  fdinfo_reads_ = 0;
  std::map<ClientKey, ClientReading> counters;
  std::vector<long> gone;
  for (auto& [pid, process] : processes_) {
    if (!ReadProcess(process, cards, sums, counters, elapsed_ns, walk)) gone.push_back(pid);
  }
  for (long pid : gone) Forget(pid);
  last_counters_ = std::move(counters);
  last_seconds_ = monotonic_seconds;

  for (size_t i = 0; i < cards.size(); ++i) {
    const CardSum& sum = sums[i];
    if (!sum.used) continue;
    TreeShare share;
    if (sum.vram_known) share.vram_bytes = sum.vram_bytes;
    if (sum.busy_known) {
      double percent = sum.busy_percent;
      if (elapsed_ns) percent += sum.busy_ns / *elapsed_ns * 100.0;
      share.busy_percent = std::min(percent, 100.0);
    }
    shares[i] = share;
  }
  return shares;
}

}  // namespace runmon::amd
