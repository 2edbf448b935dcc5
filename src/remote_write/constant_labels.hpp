// The labels every series of one queue carries (host, run_id, job_id, node_rank), and their file in the
// queue's directory. They are stored when the queue is first opened, so that `runmon push` of a queue a run
// left behind sends it under that run's labels, not those of the machine or run that pushes it; a reopen
// keeps what is stored. The file is JSON ({"format": 1, "host": ..., ...}) that people may read; it comes
// from disk, so its parser is pure, bounded and fuzzed, and a damaged file is an error the caller reports
// (the labels given to Open are stored again in its place).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon::remote_write {

// On every series; an empty value leaves its label out.
struct ConstantLabels {
  std::string host = {};
  std::string run_id = {};
  std::string job_id = {};
  std::string node_rank = {};
  bool operator==(const ConstantLabels&) const = default;
};

inline constexpr std::string_view kLabelsFileName = "labels.json";
inline constexpr size_t kMaxLabelsFileBytes = 64 * 1024;
inline constexpr size_t kMaxConstantLabelBytes = 4096;

std::string RenderConstantLabels(const ConstantLabels& labels);
// Refuses anything but a JSON object of format 1 whose known members are strings of at most
// kMaxConstantLabelBytes (members it does not know are ignored).
Result<ConstantLabels> ParseConstantLabels(std::string_view text);

// What the labels file in `directory` holds; when there is none, or it is damaged, `labels` is written there
// (atomically: a new file renamed over the old) and returned, and a damaged file's error is put in
// `replaced_damaged` (empty otherwise). An error when the file can be neither read nor written.
Result<ConstantLabels> LoadOrStoreConstantLabels(const std::filesystem::path& directory,
                                                 const ConstantLabels& labels, std::string* replaced_damaged);

}  // namespace runmon::remote_write
