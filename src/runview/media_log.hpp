// The images a run logged (wandb.Image), as leet's media pane shows them: per history key, the image files by
// step. W&B's writer flattens a logged image into one history item per field (nested keys ["samples",
// "_type"], ["samples", "path"], ...); older writers put the whole object in one item's value. Both read
// the same: {"_type": "image-file", "path": "media/images/samples_7_<hash>.png", "width": 64, ...}, the
// path relative to the run directory's files/ folder. A list of images under one key ("images/separated",
// its "filenames") becomes the keys "key[0]", "key[1]", ... as in LEET.
//
// Odd cases: a path is the user's program's word, so it must stay inside files/: absolute paths, ".."
// parts, NUL bytes and overlong paths are refused when parsed, and a symlink that leads out of the run
// directory is refused when the file is read. Logging an image again at a step replaces it (LEET's "last
// writer wins"). The newest kMaxImages are kept; older ones are dropped and counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace runmon::runview {

// One image file as a history item describes it.
struct ImageFile {
  std::string path;     // relative to files/, checked (see above)
  std::string format;   // "png", "jpeg", ... (lower case; from the path's extension when not given)
  std::string caption;  // at most kMaxCaptionBytes
  uint32_t width = 0;   // as logged (0: not given)
  uint32_t height = 0;
  uint64_t size = 0;  // bytes, as logged (0: not given)
  std::string sha256;
  friend bool operator==(const ImageFile&, const ImageFile&) = default;
};

inline constexpr size_t kMaxMediaPathBytes = 4096;
inline constexpr size_t kMaxCaptionBytes = 1024;

// A path from a history item, if it is safe to look for under files/: relative, no "." or ".." part, no
// NUL or backslash, at most kMaxMediaPathBytes. Returns the path or why not.
Result<std::string> CheckMediaPath(std::string_view path);

// Pure: an image-file object's JSON text (the whole-object form) read into an ImageFile, or why not (not
// JSON, not an object, _type is not "image-file", the path is missing or unsafe, a field has the wrong type
// or is out of range).
Result<ImageFile> ParseImageFile(std::string_view json);

// One history item as the media reader sees it: its key's parts (nested_key, or {key}) and its JSON value.
struct HistoryField {
  std::span<const std::string_view> key_parts;
  std::string_view value_json;
};

// Pure: the images in one history row, by media key, and which items were media (not metrics to chart).
struct RowImages {
  std::vector<std::pair<std::string, ImageFile>> images;
  std::vector<bool> media_items;    // parallel to the items
  std::vector<std::string> errors;  // one per media key refused ("samples: path is absolute")
};
RowImages ParseRowImages(std::span<const HistoryField> items);

class MediaLog {
 public:
  static constexpr size_t kMaxImages = 10000;

  explicit MediaLog(size_t max_images = kMaxImages) : max_images_(max_images) {}

  // The run directory (where the log and files/ are); empty: files cannot be read.
  void set_run_directory(std::filesystem::path directory) { run_directory_ = std::move(directory); }
  const std::filesystem::path& run_directory() const { return run_directory_; }

  void Add(std::string_view key, double step, ImageFile image);
  void NoteRejected(std::string error);

  struct Entry {
    double step = 0;
    ImageFile image;
  };
  // Keys in natural order ("img[2]" before "img[10]").
  const std::vector<std::string>& keys() const { return keys_; }
  // One key's images by step (null: unknown key).
  const std::deque<Entry>* Series(std::string_view key) const;
  // The newest image of `key` at a step <= `step` (null: none).
  const Entry* At(std::string_view key, double step) const;
  // Every step any key has an image at, ascending.
  std::vector<double> Steps() const;

  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  uint64_t dropped() const { return dropped_; }
  uint64_t rejected() const { return rejected_; }
  const std::string& last_rejection() const { return last_rejection_; }
  uint64_t version() const { return version_; }
  size_t MemoryBytes() const;

  // The file of an image, read whole if it is a regular file of at most max_bytes inside the run directory
  // (after symlinks are followed).
  Result<std::string> ReadFile(const ImageFile& image, size_t max_bytes) const;

 private:
  struct NaturalLess {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const;
  };

  const size_t max_images_;
  std::filesystem::path run_directory_;
  std::map<std::string, std::deque<Entry>, NaturalLess> series_;
  std::vector<std::string> keys_;
  // Every entry's (key, step) in the order first added: the front is dropped first.
  std::deque<std::pair<const std::string*, double>> order_;
  uint64_t dropped_ = 0;
  uint64_t rejected_ = 0;
  std::string last_rejection_;
  uint64_t version_ = 0;
};

// Lexicographic, except that runs of ASCII digits compare by value (LEET's order of media keys).
int CompareNatural(std::string_view a, std::string_view b);

}  // namespace runmon::runview
