// Turning an image file's bytes into what a media tile draws: decoded (by the image module's decoder) and
// resized to fit the tile, or a message saying why not (DecodeToFit). ImageDecodeWorker does the same on a
// thread of its own, so that a large image (a 4096x4096 PNG decodes in about half a second) never holds a
// frame up: the pane (media_pane.hpp) shows "decoding…" in its tile and draws the image at the first frame
// after it is ready.
// The queue is small and drops its oldest job when full (a tile scrubbed past need not be decoded; it is
// asked for again if it is shown again); a job for an image already queued or under way is not queued twice.
// Destruction waits for the decode under way (the decoder cannot be interrupted) and drops the rest.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "media/image.hpp"

namespace runmon::tui {

using DecodedImage = std::variant<media::Image, std::string>;  // the resized image, or why there is none

// `bytes` decoded and resized to fit `columns` x `rows` cells (two pixels a cell, upright).
DecodedImage DecodeToFit(media::ImageDecoder decoder, std::string_view bytes, int columns, int rows,
                         const media::DecodeLimits& limits = {});

class ImageDecodeWorker {
 public:
  static constexpr size_t kMaxQueued = 8;

  struct Job {
    std::string id;  // what the result is known by
    std::string bytes;
    int columns = 0;
    int rows = 0;
  };
  struct Done {
    std::string id;
    DecodedImage content;
  };

  explicit ImageDecodeWorker(media::ImageDecoder decoder);
  ~ImageDecodeWorker();
  ImageDecodeWorker(const ImageDecodeWorker&) = delete;
  ImageDecodeWorker& operator=(const ImageDecodeWorker&) = delete;

  // Queued unless a job of its id is queued, under way or done and not taken yet.
  void Submit(Job job);
  // Whether a job of this id is queued or under way (its result not taken yet).
  bool Pending(const std::string& id) const;
  bool busy() const;   // anything queued or under way
  bool ready() const;  // results waiting to be taken
  // The results since the last call, in the order they were done.
  std::vector<Done> TakeDone();

 private:
  void Run();

  media::ImageDecoder decoder_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::set<std::string> pending_;  // ids queued, under way or done and not taken
  std::vector<Done> done_;
  bool working_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace runmon::tui
