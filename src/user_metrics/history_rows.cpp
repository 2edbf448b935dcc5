// History rows and the summary from the command's metrics lines (see history_rows.hpp).
#include "user_metrics/history_rows.hpp"

#include <fmt/format.h>

namespace runmon::user_metrics {

bool HistoryAssembler::Remember(const MetricItem& item, bool explicit_summary) {
  // One look-up per value: a known key is found, a new one is added while there is room.
  SummaryValue* value = nullptr;
  if (summary_.size() < kMaxKeys) {
    auto [it, inserted] = summary_.try_emplace(item.key);
    if (inserted) summary_order_.push_back(item.key);
    value = &it->second;
  } else if (auto it = summary_.find(item.key); it != summary_.end()) {
    value = &it->second;
  } else {
    return false;
  }
  if (explicit_summary) {
    value->set = item.value_json;
  } else {
    value->history = item.value_json;
  }
  return true;
}

void HistoryAssembler::Join(OpenRow& open, std::vector<MetricItem>& items, double now_seconds) {
  open.last_seconds = now_seconds;
  std::vector<MetricItem>& row = open.row.items;
  if (row.empty()) row.reserve(items.size());
  for (MetricItem& item : items) {
    if (!Remember(item, false)) {
      ++values_dropped_;
      continue;
    }
    // A row's keys are few: a look along them beats a hash map's allocations, up to kIndexFrom keys.
    size_t at = row.size();
    if (row.size() < kIndexFrom) {
      for (size_t i = 0; i < row.size(); ++i) {
        if (row[i].key == item.key) at = i;
      }
    } else {
      if (open.index.empty()) {
        for (size_t i = 0; i < row.size(); ++i) open.index.emplace(row[i].key, i);
      }
      if (auto found = open.index.find(item.key); found != open.index.end()) at = found->second;
    }
    if (at < row.size()) {
      row[at].value_json = std::move(item.value_json);
    } else {
      if (!open.index.empty()) open.index.emplace(item.key, row.size());
      row.push_back(std::move(item));
    }
  }
}

void HistoryAssembler::Close(std::vector<HistoryRow>& closed) {
  if (!open_) return;
  closed.push_back(std::move(open_->row));
  open_.reset();
  ++rows_;
}

Status HistoryAssembler::Add(MetricLine line, double now_seconds, std::vector<HistoryRow>& closed) {
  if (line.summary) {
    for (const MetricItem& item : line.items) {
      if (!Remember(item, true)) ++values_dropped_;
    }
    return OkStatus();
  }
  const bool commit = !line.step.has_value();
  int64_t step = 0;
  if (line.step) {
    step = *line.step;
    if (last_step_ && step < *last_step_) {
      return Error{fmt::format("_step {} is behind step {}", step, *last_step_)};
    }
  } else if (open_) {
    step = open_->row.step;
  } else if (last_step_) {
    step = *last_step_ + 1;
  }
  if (open_ && open_->row.step != step) Close(closed);
  if (!open_) {
    open_.emplace(OpenRow{{}, {}, now_seconds});
    open_->row.step = step;
    open_->row.timestamp = line.timestamp.value_or(now_seconds);
    last_step_ = step;
  }
  Join(*open_, line.items, now_seconds);
  if (commit) Close(closed);
  return OkStatus();
}

void HistoryAssembler::FlushIdle(double now_seconds, double idle_seconds, std::vector<HistoryRow>& closed) {
  if (open_ && now_seconds - open_->last_seconds >= idle_seconds) Close(closed);
}

void HistoryAssembler::Finish(std::vector<HistoryRow>& closed) {
  Close(closed);
}

std::vector<MetricItem> HistoryAssembler::Summary() const {
  std::vector<MetricItem> items;
  items.reserve(summary_order_.size());
  for (const std::string& key : summary_order_) {
    const SummaryValue& value = summary_.at(key);
    items.push_back({key, value.set.value_or(value.history)});
  }
  return items;
}

}  // namespace runmon::user_metrics
