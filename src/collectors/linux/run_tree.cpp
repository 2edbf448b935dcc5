// The run's process tree (see run_tree.hpp).
#include "collectors/linux/run_tree.hpp"

#include <string>
#include <utility>

#include "host/file_reader.hpp"

namespace runmon {
namespace {

// Parent chains longer than this are a loop in a broken tree, not a run.
constexpr int kMaxDepth = 256;

}  // namespace

bool HasExited(const PidStat& stat) {
  return (stat.state == 'Z' || stat.state == 'X') && stat.num_threads <= 1;
}

std::optional<PidStat> ReadPidStat(const HostPaths& paths, long pid) {
  const auto text = ReadFileToString(paths.Proc(std::to_string(pid) + "/stat"));
  if (!text) return std::nullopt;
  auto stat = ParsePidStat(*text);
  if (!stat) return std::nullopt;
  return *stat;
}

RunTree::RunTree(HostPaths paths, std::optional<long> root, bool whole_tree)
    : paths_(std::move(paths)), root_(root.value_or(0)), whole_tree_(whole_tree) {}

Status RunTree::Join(long pid, const PidStat& stat, long parent) {
  if (parent == 0) {
    if (pid != root_) return Error{"not the monitored process"};
  } else {
    if (!whole_tree_) return Error{"only the monitored process is watched"};
    if (members_.count(parent) == 0) return Error{"its parent is not in the run"};
    if (stat.ppid != parent) return Error{"no longer a child"};
    if (HasExited(stat)) return Error{"exited"};
  }
  members_[pid] = stat.start_time_ticks;
  return OkStatus();
}

bool RunTree::Recognizes(long pid, const PidStat& stat) const {
  const auto it = members_.find(pid);
  return it != members_.end() && it->second == stat.start_time_ticks;
}

void RunTree::BeginLookups() {
  ancestors_this_tick_.clear();
  asked_this_tick_.clear();
}

bool RunTree::Contains(long pid) {
  if (!watching()) return false;
  asked_this_tick_.insert(pid);
  if (auto it = answers_.find(pid); it != answers_.end()) return it->second;
  if (!whole_tree_) return pid == root_;
  std::vector<long> walked;
  bool known = true;  // false when a /proc read failed: the answer is not kept
  long current = pid;
  bool member = false;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (current == root_) {
      member = true;
      break;
    }
    if (auto it = ancestors_this_tick_.find(current); it != ancestors_this_tick_.end()) {
      member = it->second;
      break;
    }
    if (current <= 1) break;
    walked.push_back(current);
    const std::optional<PidStat> stat = ReadPidStat(paths_, current);
    if (!stat) {
      // Gone (not ours, for this tick) or unreadable for now: decided again next tick.
      known = false;
      break;
    }
    if (Recognizes(current, *stat)) {
      member = true;
      break;
    }
    if (stat->ppid == current) break;
    current = stat->ppid;
  }
  for (long visited : walked) ancestors_this_tick_[visited] = member;
  if (known) answers_[pid] = member;
  return member;
}

void RunTree::EndLookups() {
  std::erase_if(answers_, [&](const auto& entry) { return asked_this_tick_.count(entry.first) == 0; });
}

}  // namespace runmon
