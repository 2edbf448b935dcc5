// Image decoding for the media pane, inline or on a worker thread. See image_decoding.hpp.
#include "tui/image_decoding.hpp"

#include <utility>

namespace runmon::tui {

DecodedImage DecodeToFit(media::ImageDecoder decoder, std::string_view bytes, int columns, int rows,
                         const media::DecodeLimits& limits) {
  auto decoded = decoder(bytes, limits);
  if (!decoded) return decoded.error();
  const media::Size fit = media::FitWithin(decoded->width, decoded->height, columns, rows * 2);
  return media::Resize(*decoded, fit.width, fit.height);
}

ImageDecodeWorker::ImageDecodeWorker(media::ImageDecoder decoder)
    : decoder_(decoder), thread_([this] { Run(); }) {}

ImageDecodeWorker::~ImageDecodeWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void ImageDecodeWorker::Submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    if (!pending_.insert(job.id).second) return;
    if (queue_.size() >= kMaxQueued) {
      pending_.erase(queue_.front().id);
      queue_.pop_front();
    }
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

bool ImageDecodeWorker::Pending(const std::string& id) const {
  std::lock_guard lock(mutex_);
  return pending_.count(id) > 0;
}

bool ImageDecodeWorker::busy() const {
  std::lock_guard lock(mutex_);
  return working_ || !queue_.empty();
}

bool ImageDecodeWorker::ready() const {
  std::lock_guard lock(mutex_);
  return !done_.empty();
}

std::vector<ImageDecodeWorker::Done> ImageDecodeWorker::TakeDone() {
  std::lock_guard lock(mutex_);
  for (const Done& done : done_) pending_.erase(done.id);
  return std::exchange(done_, {});
}

void ImageDecodeWorker::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    working_ = true;
    lock.unlock();
    DecodedImage content = DecodeToFit(decoder_, job.bytes, job.columns, job.rows);
    lock.lock();
    working_ = false;
    done_.push_back({std::move(job.id), std::move(content)});
  }
}

}  // namespace runmon::tui
