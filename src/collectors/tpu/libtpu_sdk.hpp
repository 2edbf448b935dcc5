// libtpu's monitoring SDK, for the values only it has (tensorcore utilisation, ICI link health, throttle
// score; metrics.md B §7.2): libtpu.so opened with dlopen, its versioned entry GetLibtpuSdkApi@@VERS_1.0
// called, the table it returns checked (header words 0 and 1, every slot runmon calls non-null) before any
// slot is called, one SDK client created. The table's layout is libtpu's undocumented ABI (the slot
// offsets W&B verified against libtpu 0.0.37-0.0.39), so anything unexpected refuses the SDK with the
// reason and the collector keeps to the gRPC service. libtpu's constructors crash on a host without a TPU:
// the family opens it only after the PCI scan found chips (tpu_family.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace runmon::tpu {

// GetMetric's description and values, as libtpu wrote them (bounded: 64 KiB a string, 4096 values).
struct SdkMetricValues {
  std::string description = {};
  std::vector<std::string> values = {};
};

// Not thread-safe, by design: the collector's one lane makes every call.
class LibtpuSdk {
 public:
  virtual ~LibtpuSdk() = default;
  // One metric by its SDK name; an error is libtpu's message (ErrorMessage), or what was out of bounds.
  virtual Result<SdkMetricValues> ReadMetric(const std::string& name) = 0;
};

// libtpu.so at `library`, its table checked and a client created; errors name the file and the check that
// failed. The library stays loaded for the process's life (libtpu is never unloaded).
Result<std::unique_ptr<LibtpuSdk>> OpenLibtpuSdk(const std::filesystem::path& library);

// Where libtpu.so is, as W&B looks (B §7.2): WANDB_LIBTPU_PATH, TPU_LIBRARY_PATH, LIBTPU_PATH (each a file
// or a directory holding libtpu.so) of `environment`; then, when `search_system` (runmon reads the host's
// own root), /lib, /usr/lib, /usr/local/lib, HOME's ~/.local/lib/python*/site-packages/libtpu/ and
// ~/.venv/lib/python*/site-packages/libtpu/, /usr/local/lib/python*/dist-packages/libtpu/ and
// /usr/local/lib/python*/dist-packages/torch_xla/lib/. nullopt when none holds a regular file libtpu.so.
std::optional<std::filesystem::path> FindLibtpu(const std::map<std::string, std::string>& environment,
                                                bool search_system);
// The same with the system directories (/lib ... /usr/local/lib/python*) under `system_root` instead of /,
// so that the search can be tested on a temporary tree. The environment's paths (its variables and HOME)
// are this process's own and taken as they are. The python* directories are tried newest version first
// (python3.11 before python3.10 before python3.9), so the choice never depends on the directory's order.
std::optional<std::filesystem::path> FindLibtpu(const std::map<std::string, std::string>& environment,
                                                bool search_system, const std::filesystem::path& system_root);

}  // namespace runmon::tpu
