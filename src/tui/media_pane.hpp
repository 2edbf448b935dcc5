// leet's media pane (W&B LEET's key 3): the images the run logged, a grid of tiles (LEET's media_grid, 1x2
// by default) below the metrics grid, each with its key as title and its step (and caption) below, drawn
// as half-block cells ('▀': the upper pixel the foreground, the lower the background) in the xterm-256
// palette (NearestXterm256), scaled to fit keeping their aspect. The pane's keys are LEET's: left/right scrub
// the selected key's images one step, up/down ten, home/end to the first and last; `l` links scrubbing, so
// every key shows the image at one shared step; a/d/w/s move the selection, pgup/pgdn page through the keys,
// enter shows the selected image alone (esc back). A key follows its newest image until scrubbed away from
// it.
//
// Images are read and decoded only when shown, through the run's MediaLog (which keeps reads inside the
// run directory), and kept resized in a cache of at most kCacheBytes, least recently shown dropped first.
// A file that cannot be read is tried again when the log changes (W&B may write the file after the record);
// a file that cannot be decoded says why in its tile until it leaves the cache. With background decoding
// (leet's screen) a large file is decoded on a thread of its own and the tile says "decoding…" meanwhile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "media/image.hpp"
#include "runview/media_log.hpp"
#include "tui/cell_grid.hpp"
#include "tui/image_decoding.hpp"
#include "tui/input.hpp"

namespace runmon::tui {

class MediaPane {
 public:
  // The share of the centre column the pane takes (LEET's ratio, the console pane's), and its smallest
  // height: its border, the step line and a tile of kTileMinHeight.
  static constexpr double kHeightRatio = 0.382;
  static constexpr int kTileMinWidth = 18;
  static constexpr int kTileMinHeight = 8;
  static constexpr int kMinHeight = 3 + kTileMinHeight;
  static constexpr size_t kCacheBytes = size_t{32} << 20;
  // With background decoding, what is decoded as it is drawn: up to 1024x1024 pixels (a few ms); a larger
  // image fails these limits at its header, before any pixel is decoded, and goes to the worker.
  static constexpr media::DecodeLimits kInlineDecodeLimits{.max_pixel_bytes = uint64_t{4} << 20};

  bool visible() const { return visible_; }
  void Toggle() { visible_ = !visible_; }
  // A new run is shown: forget the selection, the steps scrubbed to and the cache.
  void Reset();
  // The grid asked for (`runmon leet config`'s media grid); the pane shows fewer tiles when they would be
  // smaller than kTileMinWidth x kTileMinHeight.
  void SetGrid(int rows, int columns);

  // What decodes the files (the image module's decoder); without one a tile says why (`missing`).
  void SetDecoder(media::ImageDecoder decoder, std::string missing = {}) {
    decoder_ = decoder;
    decoder_missing_ = std::move(missing);
    worker_.reset();
  }
  // Images larger than kInlineDecodeLimits decoded on a thread of their own (image_decoding.hpp): the
  // tile says "decoding…" until a render after the image is ready. Off (every file decoded as it is drawn)
  // by default, so a frame printed once shows every image.
  void SetBackgroundDecoding(bool on) {
    background_ = on;
    if (!on) worker_.reset();
  }
  bool decoding() const { return worker_ != nullptr && worker_->busy(); }
  // Images decoded in the background that the next render draws.
  bool decoded_waiting() const { return worker_ != nullptr && worker_->ready(); }

  // `log` may be null (no run open).
  void Render(CellGrid& grid, Rect area, const runview::MediaLog* log, bool focused);
  // From the last render:
  const Rect& area() const { return area_; }
  bool Contains(int x, int y) const;
  void NotDrawn() { area_ = {}; }  // no room for it in this frame
  // What the status bar says of the selection ("Media: samples • step 7 • a cat • sync"; empty: no media).
  const std::string& status_label() const { return status_label_; }

  // The pane's keys (above); returns false for a key it does not take, which the view then handles.
  bool HandleKey(const InputEvent& event);
  // A click in a tile selects it; returns false outside the tiles.
  bool Click(int x, int y);
  void Scrub(int64_t steps);  // negative: back
  void ScrubToStart();
  void ScrubToEnd();
  void MoveSelection(int dx, int dy);
  void Page(int delta);
  void ToggleLinkedScrub();
  void ToggleFullscreen();

  bool linked_scrub() const { return linked_; }
  bool fullscreen() const { return fullscreen_; }
  size_t selected() const { return selected_; }  // index into the log's keys
  size_t cached_bytes() const { return cached_bytes_; }
  size_t decodes() const { return decodes_; }  // files read and decoded so far

 private:
  struct Cursor {
    size_t index = 0;  // into the key's steps
    bool follow = true;
  };
  struct Cached {
    std::string id;                             // run directory, path, size
    DecodedImage content;                       // the resized image, or why there is none
    uint64_t retry_after_version = UINT64_MAX;  // an unreadable file: tried again once the log moves on
    size_t bytes = 0;
  };

  void Snapshot(const runview::MediaLog* log);
  size_t PageSize() const { return static_cast<size_t>(std::max(1, shown_rows_ * shown_columns_)); }
  const runview::MediaLog::Entry* Shown(const runview::MediaLog& log, size_t key_index) const;
  void RenderTile(CellGrid& grid, Rect slot, const runview::MediaLog& log, size_t key_index, bool selected);
  void DrawImage(CellGrid& grid, Rect area, const runview::MediaLog& log,
                 const runview::MediaLog::Entry& entry);
  const Cached& Lookup(const runview::MediaLog& log, const runview::ImageFile& image, int columns, int rows);
  const Cached& Insert(Cached cached);
  void TakeDecoded();
  void UpdateStatus(const runview::MediaLog::Entry* entry);

  media::ImageDecoder decoder_ = nullptr;
  std::string decoder_missing_ = "no image decoder";
  bool visible_ = false;
  bool linked_ = false;
  bool fullscreen_ = false;
  int rows_ = 1;
  int columns_ = 2;
  size_t selected_ = 0;
  size_t page_ = 0;
  std::map<std::string, Cursor> cursors_;  // by key
  Cursor linked_cursor_;                   // into steps_
  // The step the selected tile showed at the last render, and a link or unlink to apply at the next one.
  std::optional<double> shown_step_;
  std::optional<double> pending_step_;
  // From the last render (the log may be gone by the next event):
  Rect area_{};
  std::vector<std::pair<Rect, size_t>> tiles_;  // each shown tile and its key index
  int shown_rows_ = 1;
  int shown_columns_ = 1;
  const runview::MediaLog* log_ = nullptr;
  uint64_t log_version_ = UINT64_MAX;
  std::vector<std::string> keys_;
  std::vector<size_t> key_steps_;  // each key's image count
  std::vector<double> steps_;      // every step with an image
  std::string status_label_;
  // The cache, most recently shown first.
  std::list<Cached> cache_;
  std::unordered_map<std::string, std::list<Cached>::iterator> cache_index_;
  size_t cached_bytes_ = 0;
  size_t decodes_ = 0;
  bool background_ = false;
  std::unique_ptr<ImageDecodeWorker> worker_;  // made at the first file it decodes
  Cached decoding_placeholder_;                // what a tile shows while its image is decoded
};

}  // namespace runmon::tui
