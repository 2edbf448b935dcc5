// rocm-smi's JSON (`rocm-smi -a --showmeminfo vram gtt --json`): one object with a `card<N>` object per GPU
// (string values that keep their units: "(800Mhz)", "91.0") and a `system` object, which is ignored.
// Field names changed across ROCm releases (accelerators.md §3.6), so each value is looked up under every
// spelling: `GPU memory use (%)` (ROCm ≤ 6.1.1) is the memory controller's busy share, the same as
// 6.1.2's `GPU Memory Read/Write Activity (%)`, and never memory allocation (W&B maps it to
// memoryAllocated: a semantic error runmon does not copy); only 6.1.2's `GPU Memory Allocated (VRAM%)` and
// the `--showmeminfo` byte counts say how full VRAM is. `Current Socket Graphics Package Power (W)` (MI300,
// APUs) stands in for `Average Graphics Package Power (W)`. `Energy counter` is in ticks of an unprinted
// resolution: only `Accumulated Energy (uJ)` is taken. A value that is missing, "N/A" or cannot be true is
// left unset; a card entry that is not an object is skipped; text that is not a JSON object is an error.
#pragma once

#include <string_view>
#include <vector>

#include "collectors/amd/amd_card_reading.hpp"
#include "core/result.hpp"

namespace runmon::amd {

// The cards in the order of their numbers (card2 before card10).
Result<std::vector<ToolCard>> ParseRocmSmiJson(std::string_view text);

}  // namespace runmon::amd
