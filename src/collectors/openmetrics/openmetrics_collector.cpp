// One OpenMetrics endpoint per collector (see openmetrics_collector.hpp): fetch, parse, key, publish the
// labels. Everything it keeps between ticks is bounded: the body buffer by the response cap, the series index
// by SeriesKeysOptions::max_series and max_label_bytes.
#include "collectors/openmetrics/openmetrics_collector.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "core/warning_limiter.hpp"

namespace runmon::openmetrics {
namespace {

using Clock = std::chrono::steady_clock;

std::string ValidUtf8(const std::string& text) {
  return IsValidUtf8(text) ? text : ToValidUtf8(text);
}

size_t LabelBytes(const Labels& labels) {
  size_t bytes = 0;
  for (const auto& [name, value] : labels) bytes += name.size() + value.size();
  return bytes;
}

std::string DescribeSeries(const MetricSample& sample) {
  std::string out = sample.name;
  if (sample.labels.empty()) return ValidUtf8(out);
  out += '{';
  for (size_t i = 0; i < sample.labels.size() && i < 8; ++i) {
    if (i > 0) out += ',';
    out += fmt::format("{}=\"{}\"", sample.labels[i].first, sample.labels[i].second.substr(0, 64));
  }
  if (sample.labels.size() > 8) out += ",...";
  out += '}';
  return ValidUtf8(out);
}

}  // namespace

// At most one warning per interval; the ones held back are counted and mentioned with the next.
class OpenMetricsCollector::Limiter : public WarningLimiter {
 public:
  using WarningLimiter::WarningLimiter;
};

OpenMetricsTablePublisher::OpenMetricsTablePublisher(PublishConfigFunction publish)
    : publish_(std::move(publish)) {}

void OpenMetricsTablePublisher::Publish(const std::string& endpoint, nlohmann::json table) {
  std::lock_guard lock(mutex_);
  tables_[endpoint] = std::move(table);
  // Under the lock, so two lanes' publications cannot arrive in the wrong order (an older, smaller table
  // last).
  if (publish_) publish_(std::string(kTableConfigKey), tables_);
}

nlohmann::json OpenMetricsTablePublisher::Tables() const {
  std::lock_guard lock(mutex_);
  return tables_;
}

nlohmann::json TableJson(const SeriesKeys& keys) {
  nlohmann::json table = nlohmann::json::object();
  for (const auto& [metric, label_sets] : keys.Table()) {
    nlohmann::json list = nlohmann::json::array();
    for (const Labels& labels : label_sets) {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& [name, value] : labels) object[ValidUtf8(name)] = ValidUtf8(value);
      list.push_back(std::move(object));
    }
    table[ValidUtf8(metric)] = std::move(list);
  }
  return table;
}

std::string OpenMetricsLaneName(std::string_view endpoint) {
  return fmt::format("openmetrics:{}", endpoint);
}

double OpenMetricsBudgetSeconds(double interval_seconds) {
  return 0.9 * std::min(interval_seconds * 0.5, 5.0);
}

OpenMetricsCollector::OpenMetricsCollector(OpenMetricsCollectorOptions options)
    : options_(std::move(options)),
      name_(OpenMetricsLaneName(options_.endpoint)),
      fetcher_(options_.url, options_.headers, options_.fetch),
      keys_(options_.endpoint, options_.filter.get(), options_.keys),
      parse_limiter_(std::make_unique<Limiter>(options_.warn_interval_seconds)),
      duplicate_limiter_(std::make_unique<Limiter>(options_.warn_interval_seconds)),
      limit_limiter_(std::make_unique<Limiter>(options_.warn_interval_seconds)) {}

OpenMetricsCollector::~OpenMetricsCollector() = default;

void OpenMetricsCollector::Probe(nlohmann::json& metadata) {
  metadata["runmon"]["openmetrics"][options_.endpoint] = {
      {"url", RedactUrl(options_.url)},
      {"filtered", options_.filter != nullptr && !options_.filter->KeepsAll()},
  };
}

void OpenMetricsCollector::Warn(Limiter& limiter, const std::string& message) {
  if (!options_.warn) return;
  size_t held_back = 0;
  if (!limiter.Allow(&held_back)) return;
  std::string text = fmt::format("openmetrics endpoint {}: {}", options_.endpoint, message);
  if (held_back > 0) {
    text += fmt::format(" ({} more such report{} held back in the last {} s)", held_back,
                        held_back == 1 ? "" : "s", options_.warn_interval_seconds);
  }
  options_.warn(text);
}

Status OpenMetricsCollector::Collect(const Tick& tick, MetricBatch& out) {
  report_ = ScrapeReport{};
  const auto now = Clock::now();
  const auto budget =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.budget_seconds));
  // From when the tick was due, unless that is long past (a late tick, a test's made-up tick): then from now.
  Clock::time_point start = tick.monotonic;
  if (start > now || now - start > budget / 2) start = now;
  const Clock::time_point deadline = start + budget;

  const Status fetched = fetcher_.Fetch(deadline);
  report_.fetch = fetcher_.Stats();
  if (!fetched) return fetched;

  ParseOptions parse = options_.parse;
  if (parse.format == TextFormat::kAuto &&
      fetcher_.ContentType().starts_with("application/openmetrics-text")) {
    parse.format = TextFormat::kOpenMetrics;
  }
  const ParseResult parsed = ParseExposition(fetcher_.Body(), parse);
  fetcher_.TrimBuffer();
  report_.samples = parsed.samples.size();
  report_.parse_errors = parsed.error_count;
  report_.truncated = parsed.truncated;
  if (parsed.samples.empty() && parsed.error_count > 0) {
    return Error{
        fmt::format("GET {}: the response is not a Prometheus or OpenMetrics exposition ({} line{} "
                    "rejected; {})",
                    RedactUrl(options_.url), parsed.error_count, parsed.error_count == 1 ? "" : "s",
                    parsed.errors.empty() ? "" : parsed.errors.front())};
  }

  std::vector<bool> duplicate(parsed.samples.size(), false);
  const std::vector<size_t> duplicates = FindDuplicateSeries(parsed.samples);
  for (size_t index : duplicates) duplicate[index] = true;
  const MetricSample* first_duplicate = duplicates.empty() ? nullptr : &parsed.samples[duplicates.front()];
  const MetricSample* first_oversized = nullptr;
  const size_t dropped_before = keys_.DroppedSeries();

  for (size_t i = 0; i < parsed.samples.size(); ++i) {
    const MetricSample& sample = parsed.samples[i];
    if (duplicate[i]) {
      if (SeriesKeys::UsesType(sample.type)) ++report_.duplicates;
      continue;
    }
    if (LabelBytes(sample.labels) > options_.max_label_bytes) {
      ++report_.oversized_labels;
      if (first_oversized == nullptr) first_oversized = &sample;
      continue;
    }
    std::optional<std::string> key = keys_.KeyFor(sample);
    if (!key) continue;
    if (!std::isfinite(sample.value)) {
      ++report_.non_finite;
      continue;
    }
    out.Add(std::move(*key), sample.value);
    ++report_.values;
  }

  if (parsed.error_count > 0) {
    Warn(*parse_limiter_,
         fmt::format("{} line{} could not be parsed and {} skipped: {}", parsed.error_count,
                     parsed.error_count == 1 ? "" : "s", parsed.error_count == 1 ? "was" : "were",
                     fmt::join(parsed.errors, "; ")));
  }
  if (report_.duplicates > 0 && first_duplicate != nullptr) {
    Warn(*duplicate_limiter_,
         fmt::format("{} duplicate series in one scrape (the first value of each is used), e.g. {}",
                     report_.duplicates, DescribeSeries(*first_duplicate)));
  }
  std::vector<std::string> limits;
  if (parsed.truncated) {
    limits.push_back(fmt::format("the response was cut at a parser limit ({} samples or a line over {})",
                                 parse.max_samples, FormatByteSize(parse.max_line_bytes)));
  }
  if (report_.oversized_labels > 0 && first_oversized != nullptr) {
    limits.push_back(fmt::format("{} series skipped whose labels take more than {} bytes (e.g. {})",
                                 report_.oversized_labels, options_.max_label_bytes, first_oversized->name));
  }
  if (keys_.DroppedSeries() > dropped_before) {
    limits.push_back(fmt::format("{} new series not recorded: the endpoint already has {} (the limit)",
                                 keys_.DroppedSeries() - dropped_before, options_.keys.max_series));
  }
  if (!limits.empty()) Warn(*limit_limiter_, fmt::format("{}", fmt::join(limits, "; ")));

  if (keys_.SeriesCount() > published_series_ && options_.publisher) {
    const bool due = !ever_published_ || tick.final ||
                     std::chrono::duration<double>(Clock::now() - last_publish_).count() >=
                         options_.publish_interval_seconds;
    if (due) {
      options_.publisher->Publish(options_.endpoint, TableJson(keys_));
      published_series_ = keys_.SeriesCount();
      ever_published_ = true;
      last_publish_ = Clock::now();
      report_.published = true;
    }
  }
  return OkStatus();
}

}  // namespace runmon::openmetrics
