// The monitored process and its descendants: cpu, proc.cpu.threads, proc.memory.rssMB,
// proc.memory.percent.
//
// Cost matters most here (a sample every 0.1 s of a tree of hundreds of processes), so:
//  - each tracked process keeps its stat, statm and main-thread children files open (and schedstat while it
//    is single-threaded; within the process-wide descriptor budget, see file_reader.hpp); every tick re-reads
//    them with pread from offset 0 into one shared buffer (no open/close, no directory scans);
//  - RSS comes from statm (the stat field lags) and CPU, threads, ppid and start time from stat; status is
//    never read per tick;
//  - descendants are found by walking children lists (/proc/PID/task/TID/children), never by scanning every
//    process. A children list is per thread, and reading only the main thread's misses processes forked
//    by other threads (a data-loader thread that spawns workers). So for multi-threaded processes every
//    thread's list is read too, on the first sample and then every kThreadScanSeconds. A process found
//    that way stays tracked from then on, so it is missed for at most that long.
//  - the children lists are walked only when /proc/loadavg's last PID has moved since the last tick (no
//    process or thread was created anywhere otherwise, so no list can have grown), and at least every
//    kThreadScanSeconds (see SomethingForked for when the gate is off).
//  - kernels built without CONFIG_PROC_CHILDREN have no children files; the collector then falls back to
//    one pass over every /proc/PID/stat per tick, and says so in its name.
// Who is in the run (a child of a member, a PID identified with its start time so a reused PID is a new
// process, only adopted if it is a child of the tree) is decided by run_tree.hpp, the rule every collector
// shares. A descendant whose parent exits stays tracked (it is still the run's work) until it exits. How CPU
// time is counted exactly once (reaped children, exits between ticks, zombies) is in process_cpu_ledger.hpp;
// values that cannot be true are dropped for that process and tick with a rate-limited warning. The monitored
// process exiting is the end of this source (Ended()), not an error.
#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "collectors/linux/linux_collectors.hpp"
#include "collectors/linux/parse/procfs_parse.hpp"
#include "collectors/linux/process/process_metrics.hpp"
#include "collectors/linux/process_cpu_ledger.hpp"
#include "collectors/linux/run_tree.hpp"
#include "core/warning_limiter.hpp"
#include "host/file_reader.hpp"

namespace runmon {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kThreadScanSeconds = 5.0;
constexpr size_t kMaxTrackedProcesses = 65536;
constexpr double kWarnIntervalSeconds = 600.0;

struct Process {
  long pid = 0;
  long ppid = 0;
  uint64_t start_time_ticks = 0;
  long threads = 0;
  bool exited = false;  // a zombie: its times are final; dropped once it is reaped
  bool gone = false;    // reaped, or its PID now belongs to another process: dropped this tick
  LedgerEntry cpu;
  KeptOpenFile stat;
  KeptOpenFile statm;
  KeptOpenFile schedstat;
  KeptOpenFile children;
};

// One process's stat this tick.
struct Refreshed {
  Process* process;
  std::optional<PidStat> stat;  // nullopt: gone, or unreadable (its values are dropped this tick)
};

class ProcessTreeCollector final : public Collector {
 public:
  explicit ProcessTreeCollector(const CollectorContext& ctx)
      : paths_(ctx.paths),
        clocks_(ctx.clocks),
        run_tree_(ctx.paths, ctx.pid, ctx.settings.track_process_tree),
        root_pid_(run_tree_.root()),
        page_bytes_(static_cast<uint64_t>(std::max(ctx.facts.page_size_bytes, 1L))),
        memory_total_bytes_(ctx.facts.memory_total_bytes),
        warn_(ctx.warn),
        warn_limiter_(kWarnIntervalSeconds) {
    loadavg_file_ = KeptOpenFile(ctx.paths.Proc("loadavg"), Generated::kWhole);
    LedgerLimits limits;
    limits.ticks_per_second = static_cast<double>(std::max(ctx.facts.clock_ticks_per_second, 1L));
    limits.logical_cpus = ctx.facts.logical_cpus > 0 ? ctx.facts.logical_cpus : 1.0;
    limits.available_cpus = limits.logical_cpus;
    if (auto limit = ctx.facts.cgroup.CpuLimit(); limit && *limit < limits.available_cpus) {
      limits.available_cpus = *limit;
    }
    ledger_ = CpuLedger(limits);
    memory_denominator_ =
        static_cast<double>(ctx.facts.cgroup.memory_limit_bytes.value_or(ctx.facts.memory_total_bytes));
  }

  std::string_view Name() const override {
    return scan_fallback_ ? "process_tree (full /proc scan)" : "process_tree";
  }
  bool Ended() const override { return ended_; }

  Status Collect(const Tick&, MetricBatch& out) override {
    if (root_pid_ <= 0 || ended_) return OkStatus();
    const double now_boot = clocks_.seconds_since_boot();
    const double now_mono = clocks_.monotonic_seconds();
    if (!have_previous_) {
      auto root = Adopt(root_pid_, /*expected_parent=*/0, now_boot);
      if (!root) {
        if (root_gone_) {
          ended_ = true;  // it exited before the first look: nothing to report, nothing to retry
          return OkStatus();
        }
        return Error{fmt::format("process {}: {}", root_pid_, root.error())};
      }
      have_previous_ = true;
      last_mono_ = now_mono;
      if (run_tree_.whole_tree()) {
        last_thread_scan_ = now_mono;
        SomethingForked();
        Discover(/*thread_scan=*/true, now_boot);
        adopted_this_tick_.clear();  // the first sample counts them in the lifetime average
      }
      const Process& root_process = *processes_.front();
      const double age = now_boot - static_cast<double>(root_process.start_time_ticks) / ticks_per_second();
      std::vector<const LedgerEntry*> entries;
      for (const auto& p : processes_) entries.push_back(&p->cpu);
      if (auto cpu = ledger_.LifetimePercent(entries, root_process.cpu, age))
        out.Add(process_metrics::kCpu, *cpu);
      AddSums(out);
      return OkStatus();
    }

    const double elapsed = now_mono - last_mono_;
    last_mono_ = now_mono;
    ledger_.BeginTick(elapsed);
    const bool any_there = Refresh(now_boot);
    DropGone();

    if (run_tree_.whole_tree() && !processes_.empty()) {
      const bool thread_scan = now_mono - last_thread_scan_ >= kThreadScanSeconds;
      if (thread_scan) last_thread_scan_ = now_mono;
      // Read before the walk, so a fork during the walk is seen next time.
      const bool forked = SomethingForked();
      if (thread_scan || forked) Discover(thread_scan, now_boot);
      for (Process* p : adopted_this_tick_) {
        const double age = now_boot - static_cast<double>(p->start_time_ticks) / ticks_per_second();
        ledger_.CountAdopted(p->cpu, age);
      }
    }
    adopted_this_tick_.clear();

    // Processes that all vanished unseen leave no value, never a made-up 0.
    if (auto cpu = ledger_.EndTick(any_there && root_readable_)) out.Add(process_metrics::kCpu, *cpu);
    if (processes_.empty()) {
      // The run's processes are gone (the last of them may have been seen as a zombie just now, whose last
      // interval of CPU was reported above); host metrics carry on.
      ended_ = true;
      return OkStatus();
    }
    AddSums(out);
    return OkStatus();
  }

 private:
  double ticks_per_second() const { return ledger_.limits().ticks_per_second; }

  std::string PidPath(long pid, std::string_view file) const {
    return fmt::format("{}/{}/{}", paths_.proc.string(), pid, file);
  }

  void Warn(long pid, const std::string& why) {
    size_t held_back = 0;
    if (!warn_ || !warn_limiter_.Allow(&held_back)) return;
    std::string text = fmt::format("process_tree: process {}: {}; left out of this sample", pid, why);
    if (held_back > 0) text += fmt::format(" ({} more such reports held back)", held_back);
    warn_(text);
  }

  // Reads a process's stat: the parsed text, or nullopt with `gone` set when the process is gone (the
  // read fails as a reaped process's does, or, in fixture trees, the file was emptied), or with `error`
  // saying why the text does not parse.
  std::optional<PidStat> ReadStat(Process& p, bool& gone, std::string& error) {
    gone = false;
    auto text = p.stat.Read(scratch_);
    if (!text) {
      gone = IsGoneErrno(p.stat.last_errno());
      error = text.error();
      return std::nullopt;
    }
    if (text->empty()) {
      gone = true;
      error = "exited";
      return std::nullopt;
    }
    auto parsed = ParsePidStat(*text);
    if (!parsed) {
      error = parsed.error();
      return std::nullopt;
    }
    return *parsed;
  }

  // schedstat's runtime while the process is single-threaded (it covers the main thread alone), when it can
  // tell something: the process is running, has just exited, or its tick count moved. A sleeping process
  // costs no extra read.
  std::optional<uint64_t> ReadRuntime(Process& p, const PidStat& stat, bool adopting) {
    if (stat.num_threads != 1) {
      p.schedstat.Close();
      return std::nullopt;
    }
    const bool telling = adopting || stat.state == 'R' || (HasExited(stat) && !p.exited) ||
                         !p.cpu.runtime_ns || stat.CpuTicks() != p.cpu.self_ticks;
    if (!telling) return std::nullopt;
    auto text = p.schedstat.Read(scratch_);
    if (!text) return std::nullopt;
    auto ns = ParsePidSchedstatRuntimeNs(*text);
    if (!ns) return std::nullopt;
    return *ns;
  }

  // Starts tracking `pid`, the root (expected_parent 0) or a child of the tracked `expected_parent` that
  // the run tree admits (RunTree::Join).
  Status Adopt(long pid, long expected_parent, double now_boot) {
    auto process = std::make_unique<Process>();
    process->pid = pid;
    process->stat = KeptOpenFile(PidPath(pid, "stat"), Generated::kWhole);
    bool gone = false;
    std::string error;
    auto stat = ReadStat(*process, gone, error);
    if (expected_parent == 0) root_gone_ = gone;
    if (!stat) return Error{error};
    if (auto joined = run_tree_.Join(pid, *stat, expected_parent); !joined) return joined;
    process->exited = HasExited(*stat);
    process->start_time_ticks = stat->start_time_ticks;
    process->ppid = stat->ppid;
    process->threads = stat->num_threads;
    process->schedstat = KeptOpenFile(PidPath(pid, "schedstat"), Generated::kWhole);
    process->statm = KeptOpenFile(PidPath(pid, "statm"), Generated::kWhole);
    process->children = KeptOpenFile(fmt::format("{}/{}/task/{}/children", paths_.proc.string(), pid, pid),
                                     Generated::kShortRecords);
    const auto runtime = ReadRuntime(*process, *stat, /*adopting=*/true);
    if (auto why = ledger_.Start(process->cpu, *stat, runtime, AgeOf(*stat, now_boot))) Warn(pid, *why);
    by_pid_.emplace(pid, process.get());
    processes_.push_back(std::move(process));
    return OkStatus();
  }

  double AgeOf(const PidStat& stat, double now_boot) const {
    return now_boot - static_cast<double>(stat.start_time_ticks) / ticks_per_second();
  }

  // Re-reads every tracked process, parents before children (processes_ is in adoption order, and a child
  // is only ever adopted after its parent). In that order a child that is still there when read cannot
  // already be in its parent's reaped-children time (see process_cpu_ledger.hpp). Returns whether any
  // tracked process was still there.
  bool Refresh(double now_boot) {
    refreshed_.clear();
    root_readable_ = true;
    bool any_there = false;
    for (const auto& owned : processes_) {
      Process& p = *owned;
      std::string error;
      auto stat = ReadStat(p, p.gone, error);
      if (!stat && !p.gone) Warn(p.pid, error);
      if (stat && !run_tree_.Recognizes(p.pid, *stat)) {
        stat.reset();
        p.gone = true;  // the PID was reused: the process we tracked is gone
      }
      any_there = any_there || !p.gone;
      refreshed_.push_back({&p, std::move(stat)});
    }
    // Exits first, children before parents: what each gone process's parent will find in its
    // reaped-children time.
    for (auto it = refreshed_.rbegin(); it != refreshed_.rend(); ++it) {
      if (!it->process->gone) continue;
      const auto parent = by_pid_.find(it->process->ppid);
      ledger_.Exit(it->process->cpu, parent == by_pid_.end() ? nullptr : &parent->second->cpu);
    }
    for (auto& [process, stat] : refreshed_) {
      if (process->gone) continue;
      std::optional<std::string> why;
      if (stat) {
        const long threads_before = process->threads;
        const auto runtime = ReadRuntime(*process, *stat, /*adopting=*/false);
        process->threads = stat->num_threads;
        process->ppid = stat->ppid;
        process->exited = process->exited || HasExited(*stat);
        why = ledger_.Update(process->cpu, *stat, runtime, threads_before, AgeOf(*stat, now_boot));
        if (why) Warn(process->pid, *why);
      } else {
        ledger_.Skip(process->cpu);
      }
      // The sample's value is not summed without the root's.
      if (process->pid == root_pid_ && (!stat || why)) root_readable_ = false;
    }
    return any_there;
  }

  void DropGone() {
    for (const auto& p : processes_) {
      if (!p->gone) continue;
      by_pid_.erase(p->pid);
      run_tree_.Leave(p->pid);
    }
    std::erase_if(processes_, [](const auto& p) { return p->gone; });
  }

  // The tree's threads and memory, over the processes still running (zombies have neither). A value the
  // root's files cannot give is left out rather than summed without it; a descendant whose statm cannot be
  // read (one that is exiting) is left out of the sum.
  void AddSums(MetricBatch& out) {
    double threads = 0;
    double rss_bytes = 0;
    bool any_running = false;
    bool rss_known = true;
    bool any_rss = false;
    for (const auto& p : processes_) {
      if (p->exited) continue;
      any_running = true;
      threads += static_cast<double>(p->threads);
      const auto bytes = ResidentBytes(*p);
      if (bytes) {
        rss_bytes += static_cast<double>(*bytes);
        any_rss = true;
      } else if (p->pid == root_pid_) {
        rss_known = false;
      }
    }
    if (!any_running) return;
    out.Add(process_metrics::kThreads, threads);
    if (!rss_known || !any_rss) return;
    out.Add(process_metrics::kResidentMemory, rss_bytes / kMiB);
    if (memory_denominator_ > 0)
      out.Add(process_metrics::kMemoryPercent, rss_bytes / memory_denominator_ * 100.0);
  }

  std::optional<uint64_t> ResidentBytes(Process& p) {
    auto text = p.statm.Read(scratch_);
    if (!text) return std::nullopt;
    auto pages = ParsePidStatmResidentPages(*text);
    if (!pages) {
      if (!text->empty()) Warn(p.pid, pages.error());
      return std::nullopt;
    }
    const auto bytes = PagesToBytes(*pages, page_bytes_);
    if (!bytes || (memory_total_bytes_ > 0 && *bytes > memory_total_bytes_)) {
      Warn(p.pid,
           fmt::format("resident set of {} pages cannot be true (more than the machine's memory)", *pages));
      return std::nullopt;
    }
    return bytes;
  }

  // Whether any process or thread may have been created since the last look: /proc/loadavg's last PID
  // moves with every fork and clone of the reader's PID namespace. When it has not moved, no children list
  // can have grown and the walk is skipped (a third of the reads per process). A PID is handed out just
  // before the child is linked to its parent, so after a move the next tick walks too. The gate is off
  // when runmon does not share the monitored process's PID namespace (the host's /proc seen from a
  // container), and when loadavg cannot be read.
  bool SomethingForked() {
    if (!gate_checked_) {
      gate_checked_ = true;
      std::error_code own_error, root_error;
      const auto own = std::filesystem::read_symlink(paths_.Proc("self/ns/pid"), own_error);
      const auto root = std::filesystem::read_symlink(PidPath(root_pid_, "ns/pid"), root_error);
      gate_usable_ = !own_error && !root_error && own == root;
    }
    if (!gate_usable_) return true;
    auto text = loadavg_file_.Read(scratch_);
    if (!text) return true;
    auto last = ParseLoadavgLastPid(*text);
    if (!last) return true;
    const bool moved = *last != last_pid_;
    last_pid_ = *last;
    const bool walk = moved || moved_last_tick_;
    moved_last_tick_ = moved;
    return walk;
  }

  void AdoptChildren(long parent, const std::vector<long>& children, std::deque<long>& queue,
                     double now_boot) {
    for (long child : children) {
      if (processes_.size() >= kMaxTrackedProcesses) return;
      if (by_pid_.count(child) != 0) continue;
      if (Adopt(child, parent, now_boot).ok()) {
        adopted_this_tick_.push_back(processes_.back().get());
        queue.push_back(child);
      }
    }
  }

  void Discover(bool thread_scan, double now_boot) {
    adopted_this_tick_.clear();
    std::deque<long> queue;
    for (const auto& p : processes_) {
      if (!p->exited) queue.push_back(p->pid);
    }
    if (scan_fallback_) {
      DiscoverByScanning(queue, now_boot);
      return;
    }
    while (!queue.empty()) {
      const long pid = queue.front();
      queue.pop_front();
      auto it = by_pid_.find(pid);
      if (it == by_pid_.end()) continue;
      Process& p = *it->second;
      auto text = p.children.Read(scratch_);
      if (!text) {
        // Still alive after its children file was found missing: the kernel has no CONFIG_PROC_CHILDREN.
        // (A process that exited in between fails this second stat read.)
        if (pid == root_pid_ && IsGoneErrno(p.children.last_errno()) && p.stat.Read(scratch_).ok()) {
          scan_fallback_ = true;
          for (const auto& other : processes_) queue.push_back(other->pid);
          DiscoverByScanning(queue, now_boot);
          return;
        }
        continue;
      }
      if (auto children = ParseChildrenList(*text)) AdoptChildren(pid, *children, queue, now_boot);
      if (thread_scan && p.threads > 1) {
        auto tids = ListDirectory(PidPath(pid, "task"));
        if (!tids) continue;
        for (const auto& tid : *tids) {
          if (tid == std::to_string(pid)) continue;
          auto list = ReadFileToString(fmt::format("{}/{}/task/{}/children", paths_.proc.string(), pid, tid));
          if (!list) continue;
          if (auto children = ParseChildrenList(*list)) AdoptChildren(pid, *children, queue, now_boot);
        }
      }
    }
  }

  // Without children files: read every process's stat once and follow parent links.
  void DiscoverByScanning(std::deque<long>& queue, double now_boot) {
    auto entries = ListDirectory(paths_.proc);
    if (!entries) return;
    std::unordered_map<long, std::vector<long>> children_of;
    for (const auto& name : *entries) {
      if (name.empty() ||
          !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        continue;
      }
      auto text = ReadFileToString(paths_.proc / name / "stat");
      if (!text) continue;
      if (auto stat = ParsePidStat(*text)) children_of[stat->ppid].push_back(stat->pid);
    }
    while (!queue.empty()) {
      const long pid = queue.front();
      queue.pop_front();
      if (auto it = children_of.find(pid); it != children_of.end())
        AdoptChildren(pid, it->second, queue, now_boot);
    }
  }

  HostPaths paths_;
  Clocks clocks_;
  RunTree run_tree_;  // who is in the run; processes_ holds what is read of each member
  long root_pid_;
  uint64_t page_bytes_;
  uint64_t memory_total_bytes_;
  double memory_denominator_ = 0;
  std::function<void(const std::string&)> warn_;
  WarningLimiter warn_limiter_;
  CpuLedger ledger_{LedgerLimits{}};
  std::vector<std::unique_ptr<Process>> processes_;  // in adoption order: parents before children
  std::unordered_map<long, Process*> by_pid_;
  std::vector<Process*> adopted_this_tick_;
  std::vector<Refreshed> refreshed_;  // the refresh of this tick, kept to reuse its memory
  KeptOpenFile loadavg_file_;
  long last_pid_ = -1;
  bool moved_last_tick_ = true;
  bool gate_checked_ = false;
  bool gate_usable_ = false;
  std::string scratch_;  // one read buffer for every file of every process (a tree can be thousands)
  bool have_previous_ = false;
  bool root_gone_ = false;
  bool root_readable_ = true;
  bool ended_ = false;
  bool scan_fallback_ = false;
  double last_mono_ = 0;
  double last_thread_scan_ = 0;
};

}  // namespace

std::unique_ptr<Collector> MakeProcessTreeCollector(const CollectorContext& ctx) {
  return std::make_unique<ProcessTreeCollector>(ctx);
}

}  // namespace runmon
