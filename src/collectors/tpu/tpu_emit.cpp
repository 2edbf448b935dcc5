// The tpu.* conversions of tpu_emit.hpp.
#include "collectors/tpu/tpu_emit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "collectors/linux/parse/text.hpp"

namespace runmon::tpu {
namespace {

namespace keys = tpu_metrics;
using keys::Stat;
using text::Trim;

constexpr Stat kAllStats[] = {Stat::kMean, Stat::kP50, Stat::kP90, Stat::kP95, Stat::kP99, Stat::kP999};
constexpr Stat kFiveWithP95[] = {Stat::kMean, Stat::kP50, Stat::kP90, Stat::kP95, Stat::kP999};
constexpr Stat kFiveWithP99[] = {Stat::kMean, Stat::kP50, Stat::kP90, Stat::kP99, Stat::kP999};
constexpr Stat kFourPercentiles[] = {Stat::kP50, Stat::kP90, Stat::kP95, Stat::kP999};

struct QuantileStat {
  double quantile = {};
  Stat stat = {};
};
constexpr QuantileStat kQuantiles[] = {
    {0.5, Stat::kP50}, {0.9, Stat::kP90}, {0.95, Stat::kP95}, {0.99, Stat::kP99}, {0.999, Stat::kP999}};

constexpr double kMaxExactInteger = 0x1p53;

bool IsPercent(double value) {
  return value >= 0 && value <= 100;
}

// Whether a gauge's value can be true for its key (the HBM usage is checked against the total at the end).
bool Plausible(const MetricDescriptor& key, double value) {
  if (!std::isfinite(value)) return false;
  if (&key == &keys::kTensorcoreUtilization || &key == &keys::kDutyCycle ||
      &key == &keys::kRuntimeHbmUtilization) {
    return IsPercent(value);
  }
  if (&key == &keys::kHbmCapacityTotal) return value > 0 && value < kMaxExactInteger;
  if (&key == &keys::kHbmCapacityUsage || &key == &keys::kHloQueueSize) {
    return value >= 0 && value < kMaxExactInteger;
  }
  if (&key == &keys::kTensorcoreIdleDuration) return value >= 0;
  return true;  // libtpu's scores, as it reports them
}

std::string_view TrimAny(std::string_view text, std::string_view characters) {
  const size_t first = text.find_first_not_of(characters);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(characters) - first + 1);
}

std::optional<double> ParseNumber(std::string_view text) {
  return text::ParseDecimal(Trim(text));
}

// "[label, 1.5, '2']" -> {"label", "1.5", "2"}: brackets and quotes trimmed, empty fields dropped (W&B).
std::vector<std::string_view> SplitCsv(std::string_view raw) {
  std::vector<std::string_view> parts;
  const std::string_view body = TrimAny(Trim(raw), "[]");
  size_t start = 0;
  while (start <= body.size() && !body.empty()) {
    const size_t comma = body.find(',', start);
    const std::string_view field = TrimAny(
        Trim(body.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)),
        "\"'");
    if (!field.empty()) parts.push_back(field);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

bool StatValuePlausible(double value) {
  return std::isfinite(value) && value >= 0;
}

void SetStat(TpuSample& out, const MetricSpec& spec, Stat stat, std::string_view label, double value) {
  if (!StatValuePlausible(value)) return;
  out.Set((*spec.stats)[static_cast<size_t>(stat)], label, value);
}

// Stats named by `stats`, from `values` (one number each); how many were set.
size_t SetStats(TpuSample& out, const MetricSpec& spec, std::string_view label, std::span<const Stat> stats,
                std::span<const std::string_view> values) {
  size_t added = 0;
  for (size_t i = 0; i < stats.size() && i < values.size(); ++i) {
    const auto value = ParseNumber(values[i]);
    if (!value || !StatValuePlausible(*value)) continue;
    const size_t before = out.size();
    SetStat(out, spec, stats[i], label, *value);
    added += out.size() - before;
  }
  return added;
}

size_t SetDeviceValue(TpuSample& out, const MetricSpec& spec, const DeviceLayout& layout, unsigned device,
                      double value) {
  if (!Plausible(*spec.key, value)) return 0;
  if (layout.device_count > 0 && device >= layout.device_count) return 0;
  if (spec.key == &keys::kHbmCapacityTotal && layout.max_device_hbm_bytes > 0 &&
      value > layout.max_device_hbm_bytes) {
    return 0;
  }
  const size_t before = out.size();
  out.SetDevice(*spec.key, device, value);
  return out.size() - before;
}

// A device (or chip) value for index `index`: the devices it stands for.
size_t SetIndexed(TpuSample& out, const MetricSpec& spec, const DeviceLayout& layout, uint64_t index,
                  double value) {
  const unsigned fanout = spec.shape == Shape::kDutyCycle ? std::max(1u, layout.duty_cycle_fanout) : 1u;
  constexpr uint64_t kMaxDevices = 1u << 16;
  if (index >= kMaxDevices) return 0;
  size_t added = 0;
  for (unsigned d = 0; d < fanout; ++d) {
    added += SetDeviceValue(out, spec, layout, static_cast<unsigned>(index) * fanout + d, value);
  }
  return added;
}

// --- the service's readings ------------------------------------------------------------------------------

const AttributeEntry* FindEntry(const ReadingAttribute& attribute, std::string_view key) {
  for (const AttributeEntry& entry : attribute.entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

std::optional<int64_t> EntryInteger(const AttributeEntry* entry) {
  if (entry == nullptr) return std::nullopt;
  if (entry->int_value) return entry->int_value;
  if (entry->string_value) return text::ParseI64(Trim(*entry->string_value));
  return std::nullopt;
}

// A gauge's device (or chip): its attribute's int_attr, else a kvlist id; nullopt without one (never 0).
std::optional<int64_t> ServiceIndex(const ReadingAttribute& attribute) {
  if (attribute.int_value) return attribute.int_value;
  for (std::string_view key : {"device_id", "device_ordinal", "chip_id"}) {
    if (auto id = EntryInteger(FindEntry(attribute, key))) return id;
  }
  return std::nullopt;
}

// A distribution's (or queue size's) label, or nullopt (then item_<index>, as W&B names it).
std::optional<std::string> ServiceLabel(const ReadingAttribute& attribute) {
  if (attribute.string_value && !attribute.string_value->empty())
    return SanitizeLabel(*attribute.string_value);
  if (const AttributeEntry* size = FindEntry(attribute, "buffer-size"); size && size->string_value) {
    return SanitizeLabel(*size->string_value);
  }
  if (auto ordinal = EntryInteger(FindEntry(attribute, "device_ordinal"))) {
    const AttributeEntry* core_type = FindEntry(attribute, "core_type");
    if (core_type != nullptr && core_type->string_value && !core_type->string_value->empty()) {
      return SanitizeLabel(*core_type->string_value + "_" + std::to_string(*ordinal));
    }
    return "device_" + std::to_string(*ordinal);
  }
  for (const AttributeEntry& entry : attribute.entries) {
    if (entry.string_value && !entry.string_value->empty()) return SanitizeLabel(*entry.string_value);
  }
  return std::nullopt;
}

bool SameLayout(const BucketLayout& a, const BucketLayout& b) {
  return a.kind == b.kind && a.num_finite_buckets == b.num_finite_buckets &&
         a.growth_factor == b.growth_factor && a.scale == b.scale && a.width == b.width &&
         a.offset == b.offset && a.bounds == b.bounds;
}

// One label's series, merged over the metrics (and processes) that carry it.
struct LabelSeries {
  std::string label = {};
  std::optional<DistributionReading> distribution = {};
  std::optional<SummaryReading> summary = {};
};

// Adds `more` into `into` when their buckets agree (counts summed, the mean weighted by count); false
// otherwise (the first one is kept).
bool MergeDistribution(DistributionReading& into, const DistributionReading& more) {
  if (!SameLayout(into.buckets, more.buckets) || into.bucket_counts.size() != more.bucket_counts.size()) {
    return false;
  }
  if (into.count < 0 || more.count < 0 || into.count > INT64_MAX - more.count) return false;
  const int64_t count = into.count + more.count;
  if (count > 0) {
    into.mean = (into.mean * static_cast<double>(into.count) + more.mean * static_cast<double>(more.count)) /
                static_cast<double>(count);
  }
  into.count = count;
  for (size_t i = 0; i < into.bucket_counts.size(); ++i) {
    const int64_t a = into.bucket_counts[i], b = more.bucket_counts[i];
    if (a < 0 || b < 0 || a > INT64_MAX - b) return false;
    into.bucket_counts[i] = a + b;
  }
  return true;
}

std::vector<double> UpperBounds(const BucketLayout& layout) {
  constexpr int32_t kMaxBuckets = 4096;
  std::vector<double> bounds;
  switch (layout.kind) {
    case BucketKind::kExponential:
      for (int32_t i = 0; i < std::min(layout.num_finite_buckets, kMaxBuckets); ++i) {
        bounds.push_back(layout.scale * std::pow(layout.growth_factor, i + 1));
      }
      break;
    case BucketKind::kLinear:
      for (int32_t i = 0; i < std::min(layout.num_finite_buckets, kMaxBuckets); ++i) {
        bounds.push_back(layout.offset + layout.width * (i + 1));
      }
      break;
    case BucketKind::kExplicit:
      bounds.assign(layout.bounds.begin(),
                    layout.bounds.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                layout.bounds.size(), static_cast<size_t>(kMaxBuckets))));
      break;
    case BucketKind::kNone:
      break;
  }
  return bounds;
}

size_t EmitSeries(const MetricSpec& spec, const LabelSeries& series, TpuSample& out) {
  const size_t before = out.size();
  const std::string_view label = spec.shape == Shape::kFlatDistribution ? std::string_view() : series.label;
  if (series.summary) {
    // A summary of no samples has no mean, and its quantiles (0, as a rule) are not values either.
    const SummaryReading& summary = *series.summary;
    if (summary.sample_count == 0) return 0;
    SetStat(out, spec, Stat::kMean, label, summary.sample_sum / static_cast<double>(summary.sample_count));
    for (const auto& [quantile, value] : summary.quantiles) {
      for (const QuantileStat& known : kQuantiles) {
        if (std::fabs(quantile - known.quantile) < 1e-9) SetStat(out, spec, known.stat, label, value);
      }
    }
  } else if (series.distribution && series.distribution->count > 0) {
    SetStat(out, spec, Stat::kMean, label, series.distribution->mean);
    const std::vector<double> bounds = UpperBounds(series.distribution->buckets);
    for (const QuantileStat& known : kQuantiles) {
      if (auto value = PercentileWithin(*series.distribution, bounds, known.quantile)) {
        SetStat(out, spec, known.stat, label, *value);
      }
    }
  }
  return out.size() - before;
}

size_t EmitServiceDistributions(const MetricSpec& spec, std::span<const PortReading> readings,
                                TpuSample& out) {
  std::vector<LabelSeries> series;
  std::unordered_map<std::string, size_t> by_label;
  for (const PortReading& port : readings) {
    const RuntimeMetricReading& reading = *port.reading;
    for (size_t index = 0; index < reading.metrics.size(); ++index) {
      const MetricReading& metric = reading.metrics[index];
      const auto* distribution = std::get_if<DistributionReading>(&metric.measure);
      const auto* summary = std::get_if<SummaryReading>(&metric.measure);
      if (distribution == nullptr && summary == nullptr) continue;
      std::string label = spec.shape == Shape::kFlatDistribution
                              ? std::string()
                              : ServiceLabel(metric.attribute).value_or("item_" + std::to_string(index));
      const auto same = by_label.find(label);
      if (same == by_label.end()) {
        if (!out.AdmitLabel(spec, label)) continue;
        by_label.emplace(label, series.size());
        series.push_back({.label = std::move(label)});
        if (distribution) series.back().distribution = *distribution;
        if (summary) series.back().summary = *summary;
      } else if (distribution && series[same->second].distribution) {
        MergeDistribution(*series[same->second].distribution, *distribution);
      }
    }
  }
  size_t added = 0;
  for (const LabelSeries& one : series) added += EmitSeries(spec, one, out);
  return added;
}

// Device (or chip) ids beyond the host's are numbered by their order instead (tpu-info pairs devices by
// sorted id): a service that numbers its devices 42 and 46 on a two-chip host has devices 0 and 1.
void RankIdsBeyondTheHost(std::vector<std::pair<int64_t, double>>& values, uint64_t bound) {
  if (bound == 0) return;
  const bool beyond = std::any_of(values.begin(), values.end(),
                                  [&](const auto& v) { return static_cast<uint64_t>(v.first) >= bound; });
  if (!beyond) return;
  std::set<int64_t> ids;
  for (const auto& value : values) ids.insert(value.first);
  for (auto& value : values) value.first = std::distance(ids.begin(), ids.find(value.first));
}

// One port's values of a per-device gauge by device (a chip's value on each of its devices), before the
// port's offset.
std::vector<std::pair<uint64_t, double>> ServiceDeviceValues(const MetricSpec& spec,
                                                             const RuntimeMetricReading& reading,
                                                             const DeviceLayout& layout) {
  constexpr int64_t kMaxId = 1 << 16;
  const unsigned fanout = spec.shape == Shape::kDutyCycle ? std::max(1u, layout.duty_cycle_fanout) : 1u;
  std::vector<std::pair<int64_t, double>> values;
  for (const MetricReading& metric : reading.metrics) {
    const auto* gauge = std::get_if<double>(&metric.measure);
    const auto index = ServiceIndex(metric.attribute);
    if (gauge != nullptr && index && *index >= 0 && *index < kMaxId) values.emplace_back(*index, *gauge);
  }
  RankIdsBeyondTheHost(values, layout.device_count / fanout);
  std::vector<std::pair<uint64_t, double>> devices;
  for (const auto& [index, value] : values) {
    for (unsigned d = 0; d < fanout; ++d)
      devices.emplace_back(static_cast<uint64_t>(index) * fanout + d, value);
  }
  return devices;
}

size_t EmitServiceGauges(const MetricSpec& spec, std::span<const PortReading> readings,
                         const DeviceLayout& layout, TpuSample& out) {
  constexpr uint64_t kMaxDevices = 1u << 16;
  size_t added = 0;
  for (const PortReading& port : readings) {
    for (const auto& [device, value] : ServiceDeviceValues(spec, *port.reading, layout)) {
      const uint64_t numbered = device + port.device_offset;
      if (numbered < kMaxDevices)
        added += SetDeviceValue(out, spec, layout, static_cast<unsigned>(numbered), value);
    }
  }
  return added;
}

size_t EmitServiceColonKeyed(const MetricSpec& spec, std::span<const PortReading> readings, TpuSample& out) {
  size_t added = 0;
  for (const PortReading& port : readings) {
    const RuntimeMetricReading& reading = *port.reading;
    for (size_t index = 0; index < reading.metrics.size(); ++index) {
      const MetricReading& metric = reading.metrics[index];
      const auto* gauge = std::get_if<double>(&metric.measure);
      if (gauge == nullptr || !Plausible(*spec.key, *gauge)) continue;
      const std::string label = ServiceLabel(metric.attribute).value_or("item_" + std::to_string(index));
      if (!out.AdmitLabel(spec, label)) continue;
      const size_t before = out.size();
      out.Set(*spec.key, label, *gauge);
      added += out.size() - before;
    }
  }
  return added;
}

}  // namespace

std::string SanitizeLabel(std::string_view label) {
  std::string out;
  out.reserve(label.size());
  bool pending_separator = false;
  auto append = [&](std::string_view piece) {
    if (pending_separator && !out.empty()) out += '_';
    pending_separator = false;
    out += piece;
  };
  for (const char raw : Trim(label)) {
    const char c = (raw >= 'A' && raw <= 'Z') ? static_cast<char>(raw - 'A' + 'a') : raw;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      append(std::string_view(&c, 1));
    } else if (c == '+') {
      // "_plus_": its underscores join the neighbouring separators (W&B replaces first, then collapses).
      pending_separator = true;
      append("plus");
      pending_separator = true;
    } else if (c == '%') {
      append("pct");
    } else {
      pending_separator = true;
    }
  }
  return out.empty() ? "unknown" : out;
}

std::span<const Stat> StatsForCount(std::string_view description, size_t count) {
  std::string lower(description);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  switch (count) {
    case 6:
      return kAllStats;
    case 5:
      if (lower.find("p99") != std::string::npos && lower.find("p95") == std::string::npos)
        return kFiveWithP99;
      return kFiveWithP95;
    case 4:
      return kFourPercentiles;
    default:
      return {};
  }
}

std::optional<double> DistributionPercentile(const DistributionReading& distribution, double quantile) {
  return PercentileWithin(distribution, UpperBounds(distribution.buckets), quantile);
}

std::optional<double> PercentileWithin(const DistributionReading& distribution,
                                       const std::vector<double>& bounds, double quantile) {
  const std::vector<int64_t>& counts = distribution.bucket_counts;
  if (counts.empty() || bounds.empty()) return std::nullopt;
  double total = 0;
  for (int64_t count : counts) {
    if (count < 0) return std::nullopt;
    total += static_cast<double>(count);
  }
  if (total <= 0) return std::nullopt;
  const double target = total * quantile;
  double cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const auto count = static_cast<double>(counts[i]);
    cumulative += count;
    if (cumulative < target) continue;
    double low = 0, high = 0;
    if (i == 0) {
      high = bounds[0];
    } else if (i <= bounds.size()) {
      low = bounds[i - 1];
      high = bounds[std::min(i, bounds.size() - 1)];
    } else {
      low = high = bounds.back();
    }
    const double fraction = (target - (cumulative - count)) / count;
    const double value = low + fraction * (high - low);
    if (!std::isfinite(value)) return std::nullopt;
    return value;
  }
  return bounds.back();
}

// --- TpuSample -------------------------------------------------------------------------------------------

void TpuSample::Set(const MetricDescriptor& descriptor, std::string_view placeholder, double value) {
  values_.emplace(MetricKey(descriptor, placeholder), value);
}

void TpuSample::SetDevice(const MetricDescriptor& descriptor, unsigned device, double value) {
  Set(descriptor, std::to_string(device), value);
  devices_[device] = true;
}

bool TpuSample::Has(const MetricDescriptor& descriptor, std::string_view placeholder) const {
  return values_.count(MetricKey(descriptor, placeholder)) > 0;
}

void TpuSample::AddHbmMemoryUsage() {
  for (const auto& [device, unused] : devices_) {
    const std::string index = std::to_string(device);
    const auto total = values_.find(MetricKey(keys::kHbmCapacityTotal, index));
    const auto usage = values_.find(MetricKey(keys::kHbmCapacityUsage, index));
    if (usage == values_.end()) continue;
    if (total == values_.end()) continue;
    if (usage->second > total->second) {
      values_.erase(usage);  // more in use than there is: not true
      continue;
    }
    values_.emplace(MetricKey(keys::kHbmMemoryUsage, index), usage->second / total->second * 100.0);
  }
}

bool TpuSample::AdmitLabel(const MetricSpec& spec, const std::string& label) {
  std::set<std::string>& labels = labels_[&spec];
  if (labels.count(label) > 0) return true;
  if (label.size() > kMaxLabelBytes || labels.size() >= kMaxLabelsPerMetric) {
    ++dropped_labels_;
    return false;
  }
  labels.insert(label);
  return true;
}

void TpuSample::AppendTo(MetricBatch& out) const {
  for (const auto& [key, value] : values_) out.Add(key, value);
}

// --- the two sources --------------------------------------------------------------------------------------

size_t EmitSdkValues(const MetricSpec& spec, const SdkMetricValues& values, const DeviceLayout& layout,
                     TpuSample& out) {
  size_t added = 0;
  switch (spec.shape) {
    case Shape::kGauge:
    case Shape::kDutyCycle:
      for (size_t index = 0; index < values.values.size(); ++index) {
        if (auto value = ParseNumber(values.values[index]))
          added += SetIndexed(out, spec, layout, index, *value);
      }
      break;
    case Shape::kLabeledDistribution:
      for (const std::string& line : values.values) {
        const std::vector<std::string_view> parts = SplitCsv(line);
        if (parts.size() < 2) continue;
        const std::span<const std::string_view> numbers(parts.data() + 1, parts.size() - 1);
        const std::string label = SanitizeLabel(parts[0]);
        if (!out.AdmitLabel(spec, label)) continue;
        added += SetStats(out, spec, label, StatsForCount(values.description, numbers.size()), numbers);
      }
      break;
    case Shape::kFlatDistribution: {
      std::vector<std::string_view> numbers;
      if (values.values.size() == 1) numbers = SplitCsv(values.values[0]);
      if (numbers.size() <= 1) numbers.assign(values.values.begin(), values.values.end());
      added += SetStats(out, spec, {}, StatsForCount(values.description, numbers.size()), numbers);
      break;
    }
    case Shape::kColonKeyed:
      for (size_t index = 0; index < values.values.size(); ++index) {
        const std::string_view line = values.values[index];
        const size_t colon = line.find(':');
        const std::string label = colon == std::string_view::npos ? "item_" + std::to_string(index)
                                                                  : SanitizeLabel(line.substr(0, colon));
        const auto value = ParseNumber(colon == std::string_view::npos ? line : line.substr(colon + 1));
        if (!value || !Plausible(*spec.key, *value) || !out.AdmitLabel(spec, label)) continue;
        const size_t before = out.size();
        out.Set(*spec.key, label, *value);
        added += out.size() - before;
      }
      break;
  }
  return added;
}

size_t EmitServiceReadings(const MetricSpec& spec, std::span<const PortReading> readings,
                           const DeviceLayout& layout, TpuSample& out) {
  switch (spec.shape) {
    case Shape::kGauge:
    case Shape::kDutyCycle:
      return EmitServiceGauges(spec, readings, layout, out);
    case Shape::kColonKeyed:
      return EmitServiceColonKeyed(spec, readings, out);
    case Shape::kLabeledDistribution:
    case Shape::kFlatDistribution:
      return EmitServiceDistributions(spec, readings, out);
  }
  return 0;
}

std::set<uint64_t> ReportedDevices(const MetricSpec& spec, const RuntimeMetricReading& reading,
                                   const DeviceLayout& layout) {
  std::set<uint64_t> devices;
  if (spec.shape != Shape::kGauge && spec.shape != Shape::kDutyCycle) return devices;
  for (const auto& [device, value] : ServiceDeviceValues(spec, reading, layout)) devices.insert(device);
  return devices;
}

std::vector<uint64_t> DeviceOffsets(std::span<const std::set<uint64_t>> devices_per_port) {
  std::vector<uint64_t> offsets;
  std::set<uint64_t> taken;
  for (const std::set<uint64_t>& devices : devices_per_port) {
    const bool repeats =
        std::any_of(devices.begin(), devices.end(), [&](uint64_t d) { return taken.count(d) > 0; });
    const uint64_t offset = repeats ? *taken.rbegin() + 1 : 0;
    offsets.push_back(offset);
    for (uint64_t device : devices) taken.insert(device + offset);
  }
  return offsets;
}

}  // namespace runmon::tpu
