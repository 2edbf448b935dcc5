// The monitored run's own share of each AMD GPU, for gpu.process.{i}.memoryAllocatedBytes, memoryAllocated
// and gpu: the VRAM its processes hold and how busy the GPU's graphics and compute engines were with their
// work since the last tick. W&B has no such numbers for AMD; the kernel has them per DRM client.
//
// Where the numbers come from:
//   - DRM fdinfo (drm_fdinfo_parse.hpp) of every file a process of the run has open under /dev/dri/: one DRM
//     client per file, its card (drm-pdev), its VRAM and its engines' cumulative busy nanoseconds. A client
//     reached through several descriptors (dup, or inherited across fork by dataloader workers) counts once:
//     clients are told apart by (card, drm-client-id), on kernels before 5.19 by (card, pasid), both one per
//     DRM file. A descriptor whose client says neither cannot be told apart and is left out.
//   - KFD (kfd_parse.hpp), the fallback for VRAM: a ROCm process is listed under kfd/proc/PID and its
//     vram_GPUID is what it allocated on that GPU; it is used for a process and card where fdinfo gave no
//     VRAM (fdinfo unreadable, or an old kernel without the line). Where fdinfo has it, it already includes
//     the KFD allocations (KFD allocates in the VM of the render node ROCm hands it), so adding both would
//     count them twice.
//   - busy % = Δ(gfx + compute busy ns over the run's clients) ÷ Δwall ns × 100, capped at 100, with nvtop's
//     rules: a counter that went down gives no delta (the larger value is kept, as drm-usage-stats asks), a
//     client new this tick gives none, a delta longer than the elapsed time is rejected. The first tick has
//     no busy % (nothing to compare with). Old kernels' per-ring percentages are added as they are. ROCm's
//     compute work runs on user-mode queues that the hardware scheduler feeds directly, not through the DRM
//     scheduler, so it is in no drm-engine counter: a client without any gfx or compute line tells nothing
//     about busyness (rather than 0 %), and a run whose clients have none has no busy % at all.
//   A card is the run's when one of its processes has a DRM client (or KFD VRAM) there. ROCm opens every GPU
//   it may use (HIP_VISIBLE_DEVICES narrows that), so a card can be the run's with 0 bytes.
//
// Which processes: those of the run tree (run_tree.hpp), found two ways.
//   - Every kWalkSeconds (and at the first tick), top-down from the root through every thread's children list
//     (the rule RunTree::Join applies); each process found, and each one already tracked, has its fd/
//     listed again, which is where a process opening the GPU late is seen. Tracked processes whose parent
//     exits stay tracked until they exit.
//   - Every tick, the KFD process list (one small directory: only ROCm processes, host-wide): a PID not yet
//     tracked is checked with RunTree::Contains (answers kept while asked every tick) and, when it is the
//     run's, tracked at once. So ROCm processes, the usual GPU users of a training run, are seen the tick
//     they start; a graphics-only user (an EGL/Vulkan renderer) within kWalkSeconds.
// Between walks a tick reads, of the descriptors found on /dev/dri (kept open: one pread each), one per
// client: the walk learnt which client each descriptor shows, and a client already read this tick (through
// the trainer's descriptor, say) is not read again through its dataloader workers' copies. That matters
// beyond runmon's own time: amdgpu computes an fdinfo by walking the client's buffer objects under the
// lock of its VM, which the training process needs too. (A number closed and reused for another client
// between walks is seen at the next walk.) Besides, a tick reads the KFD list and KFD files where the
// fallback needs them; no process outside the run is looked at.
// An fdinfo that can no longer be read (or reads empty, as in fixture trees) means that descriptor or its
// process is gone: the process's stat is read to tell which (a PID reused by another process has another
// start time), and a gone process is forgotten with everything read from it.
// Paths are relative to HostPaths (kfd under the sys root: class/kfd/kfd/...).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collectors/amd/drm_fdinfo_parse.hpp"
#include "collectors/linux/run_tree.hpp"
#include "host/file_reader.hpp"
#include "host/host_paths.hpp"

namespace runmon::amd {

// One AMD card, as discovery found it.
struct CardAddress {
  std::string pci_address;             // "0000:03:00.0", lower case, as drm-pdev writes it
  std::optional<uint32_t> kfd_gpu_id;  // unset: looked up in the KFD topology (ReadKfdGpuIds)
};

// The run's share of one card at one tick.
struct TreeShare {
  std::optional<uint64_t> vram_bytes;
  std::optional<double> busy_percent;
};

// PCI address -> KFD gpu_id, from class/kfd/kfd/topology/nodes/*/{gpu_id,properties} (CPU nodes, with
// gpu_id 0, and addresses claimed by several nodes, partitions of one GPU, are left out). Empty without KFD.
std::map<std::string, uint32_t> ReadKfdGpuIds(const HostPaths& paths);

class ProcessShare {
 public:
  static constexpr double kWalkSeconds = 5.0;

  ProcessShare(HostPaths paths, RunTree tree);

  // The run's share of each card this tick (index = position in `cards`); a card the run does not use is
  // std::nullopt. `monotonic_seconds` is the tick's clock, for busy-time rates.
  std::vector<std::optional<TreeShare>> Sample(std::span<const CardAddress> cards, double monotonic_seconds);

  // How many fdinfo files the last Sample read (its cost, for tests and benchmarks).
  size_t fdinfo_reads() const { return fdinfo_reads_; }

 private:
  // A DRM client: its card's PCI address and its drm-client-id (pasid on old kernels).
  using ClientKey = std::pair<std::string, uint64_t>;
  struct DrmFile {
    int fd = -1;
    KeptOpenFile fdinfo;
    std::optional<ClientKey> client;  // as last read
  };
  struct Process {
    long pid = 0;
    uint64_t start_time_ticks = 0;
    std::vector<DrmFile> drm_files;
    std::unordered_map<uint32_t, KeptOpenFile> kfd_vram;  // gpu_id -> proc/PID/vram_GPUID
    bool joined = false;  // recorded in the run tree (RunTree::Join), so that its children can join
  };
  // A client's gfx and compute busy nanoseconds as last read (the larger value kept when one went down).
  struct ClientReading {
    std::optional<uint64_t> gfx_ns, compute_ns;
    bool has_vram = false;
  };
  // What this tick's readings add up to on one card.
  struct CardSum;

  void Walk();
  void FollowKfd();
  // Starts tracking `pid`: a child of `parent` (0: the root), or, without a parent, one that
  // RunTree::Contains admitted. False when it is gone or not the run's.
  bool Track(long pid, std::optional<long> parent);
  void ScanFds(Process& process);
  bool StillThere(const Process& process) const;
  void Forget(long pid);
  void ResolveGpuIds(std::span<const CardAddress> cards);
  // Reads one process's DRM files and KFD files into `sums`; false when the process is gone. Between walks
  // (`every_descriptor` false) a descriptor whose client was read through another one this tick is not read.
  bool ReadProcess(Process& process, std::span<const CardAddress> cards, std::vector<CardSum>& sums,
                   std::map<ClientKey, ClientReading>& counters, std::optional<double> elapsed_ns,
                   bool every_descriptor);
  void CountClient(const ClientKey& key, const DrmFdinfo& info, CardSum& sum,
                   std::map<ClientKey, ClientReading>& counters, std::optional<double> elapsed_ns);

  HostPaths paths_;
  RunTree tree_;
  std::unordered_map<long, Process> processes_;  // the run's processes found so far
  std::unordered_set<long> kfd_pids_;            // this tick's KFD process list
  std::map<ClientKey, ClientReading> last_counters_;
  std::vector<std::optional<uint32_t>> gpu_ids_;        // per card of the last Sample
  std::vector<std::string> card_addresses_;             // the cards gpu_ids_ was resolved for
  std::unordered_map<std::string, size_t> card_index_;  // PCI address -> position in those cards
  std::optional<double> last_seconds_;
  std::optional<double> last_walk_seconds_;
  size_t fdinfo_reads_ = 0;
  std::string scratch_;
};

}  // namespace runmon::amd
