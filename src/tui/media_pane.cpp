// leet's media pane (see media_pane.hpp).
#include "tui/media_pane.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tui/color_scheme.hpp"

namespace runmon::tui {
namespace {

constexpr Style kDimStyle{kDefaultColor, kDefaultColor, kDim};
constexpr Style kFocusStyle{75, kDefaultColor, kBold};
constexpr Style kSelectedStyle{214, kDefaultColor, kBold};
constexpr size_t kMaxFileBytes = size_t{32} << 20;
constexpr uint8_t kOpaque = 128;  // alpha from which a pixel is drawn

std::string FormatStep(double step) {
  if (std::trunc(step) == step && std::fabs(step) < 1e15) return fmt::format("{:.0f}", step);
  return fmt::format("{:.3f}", step);
}

// `text` broken at spaces into lines of at most `width` columns (a word longer than that is cut by PutText).
std::vector<std::string> WrapWords(std::string_view text, int width) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(' ', start), text.size());
    const std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && DisplayWidth(line) + 1 + DisplayWidth(word) > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// Centred in `area`, wrapped at spaces; lines that do not fit are left out, the last shown ending in "…".
void PutCentred(CellGrid& grid, Rect area, std::string_view text, Style style) {
  if (area.empty()) return;
  std::vector<std::string> lines = WrapWords(text, area.width);
  if (lines.size() > static_cast<size_t>(area.height)) {
    lines.resize(static_cast<size_t>(area.height));
    lines.back() = TruncateToWidth(lines.back() + " …", area.width);
  }
  const int top = area.y + (area.height - static_cast<int>(lines.size())) / 2;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int width = std::min(area.width, DisplayWidth(lines[i]));
    grid.PutText(area.x + (area.width - width) / 2, top + static_cast<int>(i), lines[i], style, area.width);
  }
}

Rect Inside(Rect area) {
  return {area.x + 1, area.y + 1, area.width - 2, area.height - 2};
}

}  // namespace

void MediaPane::Reset() {
  selected_ = 0;
  page_ = 0;
  cursors_.clear();
  linked_cursor_ = {};
  pending_step_.reset();
  fullscreen_ = false;
  cache_.clear();
  cache_index_.clear();
  cached_bytes_ = 0;
}

void MediaPane::SetGrid(int rows, int columns) {
  rows_ = std::clamp(rows, 1, 9);
  columns_ = std::clamp(columns, 1, 9);
}

bool MediaPane::Contains(int x, int y) const {
  return visible_ && x >= area_.x && x < area_.x + area_.width && y >= area_.y && y < area_.y + area_.height;
}

bool MediaPane::HandleKey(const InputEvent& event) {
  switch (event.code) {
    case KeyCode::kLeft:
      Scrub(-1);
      return true;
    case KeyCode::kRight:
      Scrub(1);
      return true;
    case KeyCode::kUp:
      Scrub(-10);
      return true;
    case KeyCode::kDown:
      Scrub(10);
      return true;
    case KeyCode::kHome:
      ScrubToStart();
      return true;
    case KeyCode::kEnd:
      ScrubToEnd();
      return true;
    case KeyCode::kPageUp:
      Page(-1);
      return true;
    case KeyCode::kPageDown:
      Page(1);
      return true;
    case KeyCode::kEnter:
      ToggleFullscreen();
      return true;
    case KeyCode::kEscape:
      if (!fullscreen_) return false;
      fullscreen_ = false;
      return true;
    case KeyCode::kCharacter:
      switch (event.character) {
        case U'a':
          MoveSelection(-1, 0);
          return true;
        case U'd':
          MoveSelection(1, 0);
          return true;
        case U'w':
          MoveSelection(0, -1);
          return true;
        case U's':
          MoveSelection(0, 1);
          return true;
        case U'l':
          ToggleLinkedScrub();
          return true;
        default:
          return false;
      }
    default:
      return false;
  }
}

bool MediaPane::Click(int x, int y) {
  for (const auto& [tile, key_index] : tiles_) {
    if (x >= tile.x && x < tile.x + tile.width && y >= tile.y && y < tile.y + tile.height) {
      selected_ = key_index;
      return true;
    }
  }
  return false;
}

void MediaPane::Scrub(int64_t steps) {
  if (keys_.empty()) return;
  const size_t count = linked_ ? steps_.size() : key_steps_[selected_];
  if (count == 0) return;
  Cursor& cursor = linked_ ? linked_cursor_ : cursors_[keys_[selected_]];
  const int64_t now = cursor.follow ? static_cast<int64_t>(count) - 1
                                    : std::min<int64_t>(static_cast<int64_t>(cursor.index), count - 1);
  cursor.index = static_cast<size_t>(std::clamp<int64_t>(now + steps, 0, static_cast<int64_t>(count) - 1));
  cursor.follow = cursor.index + 1 == count;
}

void MediaPane::ScrubToStart() {
  if (keys_.empty()) return;
  Cursor& cursor = linked_ ? linked_cursor_ : cursors_[keys_[selected_]];
  cursor = {0, (linked_ ? steps_.size() : key_steps_[selected_]) <= 1};
}

void MediaPane::ScrubToEnd() {
  if (keys_.empty()) return;
  (linked_ ? linked_cursor_ : cursors_[keys_[selected_]]) = {0, true};
}

void MediaPane::MoveSelection(int dx, int dy) {
  if (keys_.empty() || fullscreen_) return;
  const size_t page_size = PageSize();
  const size_t start = selected_ / page_size * page_size;
  const size_t end = std::min(keys_.size(), start + page_size);
  const size_t local = selected_ - start;
  const int row = std::clamp(static_cast<int>(local) / shown_columns_ + dy, 0, shown_rows_ - 1);
  const int column = std::clamp(static_cast<int>(local) % shown_columns_ + dx, 0, shown_columns_ - 1);
  selected_ = std::min(end - 1, start + static_cast<size_t>(row * shown_columns_ + column));
}

void MediaPane::Page(int delta) {
  if (keys_.empty()) return;
  const size_t page_size = PageSize();
  const int64_t pages = static_cast<int64_t>((keys_.size() + page_size - 1) / page_size);
  const int64_t page = std::clamp<int64_t>(static_cast<int64_t>(selected_ / page_size) + delta, 0, pages - 1);
  if (static_cast<size_t>(page) != selected_ / page_size) selected_ = static_cast<size_t>(page) * page_size;
}

void MediaPane::ToggleLinkedScrub() {
  if (keys_.empty()) return;
  linked_ = !linked_;
  pending_step_ = shown_step_;  // applied at the next render, where the log's steps are at hand
}

void MediaPane::ToggleFullscreen() {
  if (keys_.empty()) return;
  fullscreen_ = !fullscreen_;
}

void MediaPane::Snapshot(const runview::MediaLog* log) {
  if (log == nullptr) {
    keys_.clear();
    key_steps_.clear();
    steps_.clear();
    log_ = nullptr;
    return;
  }
  // The keys every frame (a log may be another at the same address by now); the union of steps, which
  // sorts every image's step, only when the log changed.
  keys_ = log->keys();
  key_steps_.clear();
  for (const auto& key : keys_) key_steps_.push_back(log->Series(key)->size());
  if (log != log_ || log->version() != log_version_) {
    log_ = log;
    log_version_ = log->version();
    steps_ = log->Steps();
  }
  selected_ = keys_.empty() ? 0 : std::min(selected_, keys_.size() - 1);
  if (keys_.empty()) fullscreen_ = false;
  if (!pending_step_) return;
  // Linking starts at the step the selected key showed; unlinking leaves every key at the shared step.
  const double step = *pending_step_;
  pending_step_.reset();
  if (linked_) {
    const auto at = std::lower_bound(steps_.begin(), steps_.end(), step);
    linked_cursor_.index = static_cast<size_t>(at - steps_.begin());
    linked_cursor_.follow = linked_cursor_.index + 1 >= steps_.size();
    return;
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    const auto& series = *log->Series(keys_[i]);
    const auto after = std::upper_bound(series.begin(), series.end(), step,
                                        [](double value, const auto& entry) { return value < entry.step; });
    const size_t index = after == series.begin() ? 0 : static_cast<size_t>(after - series.begin()) - 1;
    cursors_[keys_[i]] = {index, index + 1 == series.size()};
  }
}

const runview::MediaLog::Entry* MediaPane::Shown(const runview::MediaLog& log, size_t key_index) const {
  if (linked_) {
    if (steps_.empty()) return nullptr;
    const size_t index =
        linked_cursor_.follow ? steps_.size() - 1 : std::min(linked_cursor_.index, steps_.size() - 1);
    return log.At(keys_[key_index], steps_[index]);
  }
  const auto* series = log.Series(keys_[key_index]);
  if (series == nullptr || series->empty()) return nullptr;
  const auto cursor = cursors_.find(keys_[key_index]);
  const bool follow = cursor == cursors_.end() || cursor->second.follow;
  return &(*series)[follow ? series->size() - 1 : std::min(cursor->second.index, series->size() - 1)];
}

void MediaPane::Render(CellGrid& grid, Rect area, const runview::MediaLog* log, bool focused) {
  area_ = area;
  tiles_.clear();
  status_label_.clear();
  if (area.width < 8 || area.height < 4) return;
  TakeDecoded();
  Snapshot(log);
  const Style border = focused ? kFocusStyle : kDimStyle;
  std::string title = "Media";
  if (linked_) title += " • sync";
  if (fullscreen_) title += " • fullscreen";
  grid.DrawBox(area, border, title);
  const Rect inner = Inside(area);
  if (log == nullptr || keys_.empty()) {
    std::string message = log == nullptr ? "no run open" : "no media";
    if (log != nullptr && log->rejected() > 0) {
      message += fmt::format(" ({} refused: {})", log->rejected(), log->last_rejection());
    }
    grid.PutText(inner.x + 1, inner.y, message, kDimStyle, inner.width - 1);
    return;
  }
  const Rect tiles{inner.x, inner.y + 1, inner.width, inner.height - 1};
  shown_columns_ = std::clamp(tiles.width / kTileMinWidth, 1, columns_);
  shown_rows_ = std::clamp(tiles.height / kTileMinHeight, 1, rows_);
  const size_t page_size = PageSize();
  const size_t start = selected_ / page_size * page_size;
  const size_t end = std::min(keys_.size(), start + page_size);
  const std::string position = fmt::format(" [{}-{} of {}] ", start + 1, end, keys_.size());
  const int position_width = DisplayWidth(position);
  if (position_width + DisplayWidth(title) + 6 < area.width) {
    grid.PutText(area.x + area.width - 1 - position_width, area.y, position, border, position_width);
  }

  // The step line: where the scrub is among the selected key's steps (all keys' when linked).
  const size_t count = linked_ ? steps_.size() : key_steps_[selected_];
  const Cursor* cursor = linked_ ? &linked_cursor_ : nullptr;
  if (!linked_) {
    const auto it = cursors_.find(keys_[selected_]);
    if (it != cursors_.end()) cursor = &it->second;
  }
  const size_t index =
      count == 0 ? 0 : (cursor == nullptr || cursor->follow ? count - 1 : std::min(cursor->index, count - 1));
  const runview::MediaLog::Entry* selected_entry = Shown(*log, selected_);
  shown_step_ = linked_ && !steps_.empty()  ? std::optional(steps_[index])
                : selected_entry != nullptr ? std::optional(selected_entry->step)
                                            : std::nullopt;
  if (count > 0) {
    const int bar_width = std::clamp(inner.width - 30, 8, 48);
    const int marker =
        count > 1 ? static_cast<int>(index * static_cast<size_t>(bar_width - 1) / (count - 1)) : 0;
    std::string bar;
    for (int i = 0; i < bar_width; ++i) bar += i < marker ? "━" : i == marker ? "●" : "─";
    const double step = linked_ ? steps_[index] : log->Series(keys_[selected_])->at(index).step;
    grid.PutText(inner.x + 1, inner.y,
                 fmt::format("step {}  {}  {}/{}{}", FormatStep(step), bar, index + 1, count,
                             cursor == nullptr || cursor->follow ? " · newest" : ""),
                 kDimStyle, inner.width - 1);
  }

  if (fullscreen_) {
    RenderTile(grid, tiles, *log, selected_, true);
  } else {
    const int slot_width = tiles.width / shown_columns_;
    const int slot_height = tiles.height / shown_rows_;
    for (size_t i = start; i < end; ++i) {
      const int local = static_cast<int>(i - start);
      const Rect slot{tiles.x + local % shown_columns_ * slot_width,
                      tiles.y + local / shown_columns_ * slot_height, slot_width, slot_height};
      RenderTile(grid, slot, *log, i, focused && i == selected_);
    }
  }
  UpdateStatus(selected_entry);
}

void MediaPane::RenderTile(CellGrid& grid, Rect slot, const runview::MediaLog& log, size_t key_index,
                           bool selected) {
  if (slot.width < 3 || slot.height < 3) return;
  tiles_.emplace_back(slot, key_index);
  grid.DrawBox(slot, selected ? kSelectedStyle : kDimStyle,
               TruncateToWidth(keys_[key_index], slot.width - 4));
  const Rect inner = Inside(slot);
  const runview::MediaLog::Entry* entry = Shown(log, key_index);
  const bool footer = inner.height >= 3;
  const Rect picture{inner.x, inner.y, inner.width, inner.height - (footer ? 1 : 0)};
  if (entry == nullptr) {
    PutCentred(grid, picture, "no image at this step", kDimStyle);
    return;
  }
  DrawImage(grid, picture, log, *entry);
  if (!footer) return;
  std::string text = "step " + FormatStep(entry->step);
  if (!entry->image.caption.empty()) text = entry->image.caption + " • " + text;
  grid.PutText(inner.x, inner.y + inner.height - 1, text, kDimStyle, inner.width);
}

void MediaPane::DrawImage(CellGrid& grid, Rect area, const runview::MediaLog& log,
                          const runview::MediaLog::Entry& entry) {
  if (area.empty()) return;
  const std::string& format = entry.image.format;
  if (!format.empty() && format != "png" && format != "jpeg") {
    PutCentred(grid, area, format + " not shown", kDimStyle);
    return;
  }
  const Cached& cached = Lookup(log, entry.image, area.width, area.height);
  if (const auto* message = std::get_if<std::string>(&cached.content)) {
    PutCentred(grid, area, *message, kDimStyle);
    return;
  }
  const media::Image& image = std::get<media::Image>(cached.content);
  const int cell_rows = (image.height + 1) / 2;
  const int x0 = area.x + (area.width - image.width) / 2;
  const int y0 = area.y + (area.height - cell_rows) / 2;
  const auto pixel = [&](int x, int y) -> const uint8_t* {
    return y < image.height ? image.rgba.data() + 4 * (static_cast<size_t>(y) * image.width + x) : nullptr;
  };
  for (int row = 0; row < cell_rows; ++row) {
    for (int x = 0; x < image.width; ++x) {
      const uint8_t* top = pixel(x, 2 * row);
      const uint8_t* bottom = pixel(x, 2 * row + 1);
      const bool top_shown = top[3] >= kOpaque;
      const bool bottom_shown = bottom != nullptr && bottom[3] >= kOpaque;
      const auto colour = [](const uint8_t* p) {
        return NearestXterm256(static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2]);
      };
      if (top_shown) {
        grid.Set(x0 + x, y0 + row, U'▀', {colour(top), bottom_shown ? colour(bottom) : kDefaultColor});
      } else if (bottom_shown) {
        grid.Set(x0 + x, y0 + row, U'▄', {colour(bottom), kDefaultColor});
      } else {
        grid.Set(x0 + x, y0 + row, U' ');
      }
    }
  }
}

const MediaPane::Cached& MediaPane::Lookup(const runview::MediaLog& log, const runview::ImageFile& image,
                                           int columns, int rows) {
  std::string id = fmt::format("{}\n{}\n{}x{}", log.run_directory().string(), image.path, columns, rows);
  if (const auto found = cache_index_.find(id); found != cache_index_.end()) {
    const auto entry = found->second;
    const bool retry =
        entry->retry_after_version != UINT64_MAX && entry->retry_after_version != log.version();
    if (!retry) {
      cache_.splice(cache_.begin(), cache_, entry);
      return *entry;
    }
    cached_bytes_ -= entry->bytes;
    cache_.erase(entry);
    cache_index_.erase(found);
  }
  decoding_placeholder_.content = std::string("decoding…");
  if (worker_ != nullptr && worker_->Pending(id)) return decoding_placeholder_;
  auto bytes = log.ReadFile(image, kMaxFileBytes);
  Cached cached;
  if (bytes && decoder_ != nullptr && background_) {
    // A small image now; one that fails the small limits (a large one, or a damaged file, whose error
    // then comes from the worker) on the worker.
    cached.content = DecodeToFit(decoder_, *bytes, columns, rows, kInlineDecodeLimits);
    if (!std::holds_alternative<media::Image>(cached.content)) {
      if (worker_ == nullptr) worker_ = std::make_unique<ImageDecodeWorker>(decoder_);
      worker_->Submit({std::move(id), std::move(*bytes), columns, rows});
      return decoding_placeholder_;
    }
  } else if (!bytes) {
    cached.content = bytes.error();
    cached.retry_after_version = log.version();
  } else if (decoder_ == nullptr) {
    cached.content = "images are not shown: " + decoder_missing_;
  } else {
    cached.content = DecodeToFit(decoder_, *bytes, columns, rows);
  }
  ++decodes_;
  cached.id = std::move(id);
  return Insert(std::move(cached));
}

void MediaPane::TakeDecoded() {
  if (worker_ == nullptr) return;
  for (ImageDecodeWorker::Done& done : worker_->TakeDone()) {
    ++decodes_;
    if (cache_index_.count(done.id) > 0) continue;
    Cached cached;
    cached.id = std::move(done.id);
    cached.content = std::move(done.content);
    Insert(std::move(cached));
  }
}

const MediaPane::Cached& MediaPane::Insert(Cached cached) {
  cached.bytes = cached.id.size() + sizeof(Cached) +
                 std::visit(
                     [](const auto& content) {
                       if constexpr (std::is_same_v<std::decay_t<decltype(content)>, std::string>) {
                         return content.size();
                       } else {
                         return content.MemoryBytes();
                       }
                     },
                     cached.content);
  cached_bytes_ += cached.bytes;
  std::string id = cached.id;
  cache_.push_front(std::move(cached));
  cache_index_[std::move(id)] = cache_.begin();
  while (cached_bytes_ > kCacheBytes && cache_.size() > 1) {
    cached_bytes_ -= cache_.back().bytes;
    cache_index_.erase(cache_.back().id);
    cache_.pop_back();
  }
  return cache_.front();
}

void MediaPane::UpdateStatus(const runview::MediaLog::Entry* entry) {
  status_label_ = "Media: " + keys_[selected_];
  if (entry != nullptr) status_label_ += " • step " + FormatStep(entry->step);
  if (entry != nullptr && !entry->image.caption.empty()) {
    status_label_ += " • " + TruncateToWidth(entry->image.caption, 48);
  }
  if (linked_) status_label_ += " • sync";
}

}  // namespace runmon::tui
