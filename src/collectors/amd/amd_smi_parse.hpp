// amd-smi's JSON (ROCm 6+). `amd-smi metric --json` is a list with one object per GPU, `{"gpu": N,
// "usage": {...}, "power": {...}, ...}` (6.0 printed a lone object, not a list, for a single GPU). Its
// numbers are plain in 6.0 and `{"value": n, "unit": "u"}` from 6.1; a value it cannot read is "N/A".
// Names moved between releases: usage `gfx_usage`/`mem_usage` (6.0) became `gfx_activity`/`umc_activity`
// (the memory controller's busy share, not allocation); power `current_power` (6.0) became `socket_power`
// (current socket power, else average), and 6.0's `power_limit` is hwmon's power1_cap in µW; clocks
// `gfx.cur_clk` (6.0), `gfx.clk` (6.1.0), `gfx_0.clk` (6.1.2+), and `MEM` became `mem_0`. Units are honoured
// where given: memory in MB (amd-smi divides bytes by 2^20), energy in J (every release so far, whatever
// accelerators.md §3.7 says) or µJ, power in W, clocks in MHz; a value in a unit not known here is left unset
// rather than guessed at, as is one that cannot be true. The metric output carries no PCI address: `amd-smi
// list --json` pairs each `gpu` with its `bdf`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/amd/amd_card_reading.hpp"
#include "core/result.hpp"

namespace runmon::amd {

// The cards in amd-smi's order (its `gpu` numbers); a list entry that is not an object is skipped.
Result<std::vector<ToolCard>> ParseAmdSmiMetricJson(std::string_view text);

struct AmdSmiListEntry {
  unsigned gpu = 0;
  std::string pci_bus;  // normalized, "0000:03:00.0"
  std::string uuid;     // empty when amd-smi says "N/A"
};

// `amd-smi list --json`: the GPUs with a readable `gpu` and `bdf`.
Result<std::vector<AmdSmiListEntry>> ParseAmdSmiListJson(std::string_view text);

// Gives each card the PCI address the list has for its `gpu` number.
void AssignPciBuses(std::vector<ToolCard>& cards, const std::vector<AmdSmiListEntry>& list);

}  // namespace runmon::amd
