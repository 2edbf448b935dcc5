// /proc/PID/fdinfo/FD of a file open on a DRM device node (/dev/dri/card*, renderD*), as the amdgpu driver
// writes it: one client of one GPU (kernel Documentation/gpu/drm-usage-stats.rst, amdgpu_fdinfo.c; nvtop's
// parse_drm_fdinfo_amd reads the same keys). Three generations of keys exist:
//   - Linux 5.14-5.18: "pdev", "pasid", "vram mem: N kB", "gtt mem: N kB" and per ring "gfx0: 12.34%",
//     "compute3: 5.0%" (a share the driver measured over its own window, not a counter);
//   - 5.19 and later: "drm-driver", "drm-pdev", "drm-client-id", "drm-memory-vram: N KiB",
//     "drm-memory-gtt: N KiB" and "drm-engine-<name>: N ns", cumulative busy nanoseconds (an engine that was
//     never busy has no line);
//   - 6.12 and later add the DRM core's drm-total-/drm-resident-/drm-shared-<region> (bytes, KiB or MiB;
//     drm-memory-<region> is kept as an alias of drm-resident-<region>).
// A file that is not a DRM client's (an ordinary file's fdinfo: no drm-driver and no pdev) is not an error,
// just an empty reading. A DRM client's value that does not parse is an error: the file is not what the
// kernel writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace runmon::amd {

// One engine's busy figure: cumulative nanoseconds (drm-engine-<name>), or on old kernels one ring's
// percentage (gfx0, compute1, ...), whose `name` is the ring's prefix without its number.
struct DrmEngineBusy {
  std::string name;  // gfx, compute, dma, dec, enc, enc_1, jpeg, ...
  bool percent = false;
  uint64_t busy_ns = 0;       // when !percent
  double busy_percent = 0.0;  // when percent
};

struct DrmFdinfo {
  std::string driver;                 // drm-driver ("amdgpu"); empty on kernels before 5.19
  std::string pci_address;            // drm-pdev / pdev, lower case ("0000:03:00.0"); empty: not a DRM client
  std::optional<uint64_t> client_id;  // drm-client-id: one per DRM file, shared by dup'ed and inherited fds
  std::optional<uint64_t> pasid;      // the client's address-space id, also one per DRM file (old kernels)
  std::optional<uint64_t> vram_bytes;
  std::optional<uint64_t> gtt_bytes;
  std::vector<DrmEngineBusy> engines;

  bool IsDrmClient() const { return !pci_address.empty() || !driver.empty(); }
};

Result<DrmFdinfo> ParseDrmFdinfo(std::string_view text);

}  // namespace runmon::amd
