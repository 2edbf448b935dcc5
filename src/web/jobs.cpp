// Jobs: runs grouped by job id, a job's nodes and keys, one metric across its nodes. See jobs.hpp.
#include "web/jobs.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "core/wall_clock.hpp"
#include "runview/job_band.hpp"
#include "runview/metric_groups.hpp"
#include "web/api_common.hpp"
#include "web/downsample.hpp"

namespace runmon::web {
namespace {

using nlohmann::json;

constexpr long long kMaxWidth = 2000;
constexpr size_t kMaxKeyBytes = 512;
// The range a series request may name, in seconds from the job's start either way (about 31,700 years):
// beyond it the arithmetic on times would lose every digit that matters.
constexpr double kMaxRangeSeconds = 1e12;
// Each node's first slice when a request loads it: the rest is read in the background.
constexpr auto kNodeFirstSlice = std::chrono::milliseconds(50);

json Text(std::string_view text) {
  return json(ToValidUtf8(text));
}

json OptionalNumber(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

// Numbers first in numeric order (plain decimals), then the rest as text.
std::tuple<int, unsigned long long, std::string_view> RankOrder(const std::string& rank) {
  unsigned long long value = 0;
  const auto [end, error] = std::from_chars(rank.data(), rank.data() + rank.size(), value);
  if (!rank.empty() && error == std::errc() && end == rank.data() + rank.size()) return {0, value, rank};
  return {1, 0, rank};
}

void NameNodes(std::vector<JobNode>& nodes) {
  std::set<std::string> used;
  for (auto& node : nodes) {
    const std::string base = runview::NodeName(node.rank, node.host);
    node.name = base;
    if (used.insert(node.name).second) continue;
    node.name = base + " · " + runview::ShortName(node.run_id.empty() ? node.dir : node.run_id, 64);
    for (int k = 2; !used.insert(node.name).second; ++k) node.name = fmt::format("{} #{}", base, k);
  }
}

json NodeJson(const JobNode& node) {
  return {{"dir", Text(node.dir)},
          {"run_name", Text(node.run_name)},
          {"node", Text(node.name)},
          {"node_rank", Text(node.rank)},
          {"host", Text(node.host)},
          {"state", node.state},
          {"start", OptionalNumber(node.start)},
          {"duration", OptionalNumber(node.duration)}};
}

json JobJson(const JobSummary& job) {
  json states = json::object();
  json nodes = json::array();
  for (const auto& node : job.nodes) {
    states[node.state] = states.value(node.state, 0) + 1;
    nodes.push_back(NodeJson(node));
  }
  std::optional<double> duration;
  if (job.start && job.end) duration = std::max(0.0, *job.end - *job.start);
  return {{"job_id", Text(job.id)},
          {"name", Text(job.name)},
          {"launcher", Text(job.launcher)},
          {"start", OptionalNumber(job.start)},
          {"duration", OptionalNumber(duration)},
          {"node_count", job.nodes.size()},
          {"states", std::move(states)},
          {"nodes", std::move(nodes)}};
}

// The job's charted nodes (its first kMaxJobNodes), each loaded and locked for reading while this lives.
struct LockedJob {
  JobSummary job;
  std::vector<std::shared_ptr<LoadedRun>> runs;  // per charted node; null when its log cannot be read
  std::vector<std::shared_lock<std::shared_mutex>> locks;
  bool loading = false;
  std::string warning;
};

Result<LockedJob> LockJob(RunStore& store, std::string_view job_id) {
  auto jobs = GroupJobs(store.Runs(), WallSeconds());
  const auto it =
      std::find_if(jobs.begin(), jobs.end(), [&](const JobSummary& job) { return job.id == job_id; });
  if (it == jobs.end()) return Error{fmt::format("404:no job '{}' in the logdir", ToValidUtf8(job_id))};
  LockedJob locked;
  locked.job = std::move(*it);
  const size_t charted = std::min(locked.job.nodes.size(), kMaxJobNodes);
  if (locked.job.nodes.size() > charted) {
    locked.warning = fmt::format("the job has {} nodes; the first {} by rank are charted",
                                 locked.job.nodes.size(), charted);
  }
  // Loaded first, then locked: loading takes each run's lock for writing.
  for (size_t i = 0; i < charted; ++i)
    locked.runs.push_back(store.Acquire(locked.job.nodes[i].dir, kNodeFirstSlice));
  for (const auto& run : locked.runs) {
    if (run == nullptr) continue;
    locked.locks.emplace_back(run->mutex);
    locked.loading = locked.loading || !run->caught_up;
  }
  return locked;
}

// "GPU utilization · GPU 0", and its unit, from the catalog.
std::pair<std::string, std::string> KeyTitle(std::string_view key) {
  const runview::KeyIdentity identity = runview::IdentifySystemKey(key);
  std::string title = identity.title.empty() ? std::string(key) : identity.title;
  if (!identity.series.empty()) title += " · " + identity.series;
  return {title, identity.unit};
}

template <typename Field>
void AppendBandColumn(std::string& out, std::string_view name, const std::vector<runview::BandPoint>& band,
                      Field field) {
  out += fmt::format("\"{}\":[", name);
  for (size_t i = 0; i < band.size(); ++i) {
    if (i > 0) out += ',';
    field(band[i]);
  }
  out += ']';
}

}  // namespace

std::vector<JobSummary> GroupJobs(const std::vector<RunRow>& rows, double now_seconds) {
  std::map<std::string, JobSummary> jobs;
  for (const auto& row : rows) {
    if (!row.summary || row.summary->overview.job_id.empty()) continue;
    const runview::RunOverview& overview = row.summary->overview;
    // The id as the API spells it (valid UTF-8), so that what a page sends back finds the job.
    const std::string id = ToValidUtf8(overview.job_id);
    JobSummary& job = jobs[id];
    job.id = id;
    if (job.name.empty()) job.name = overview.job_name;
    if (job.launcher.empty()) job.launcher = overview.job_launcher;
    const std::string& dir = row.entry.directory_name;
    const runview::RunState state = row.summary->verdict.state;
    JobNode node;
    node.dir = dir;
    node.run_name = DisplayName(overview, row.entry.id.empty() ? dir : row.entry.id);
    node.run_id = overview.id.empty() ? row.entry.id : overview.id;
    node.rank = overview.node_rank;
    node.host = overview.host;
    node.state = std::string(runview::RunStateName(state));
    node.start = overview.start_time;
    node.duration = runview::RunRuntime(overview, state, now_seconds);
    if (node.start) {
      job.start = job.start ? std::min(*job.start, *node.start) : *node.start;
      const double end = *node.start + node.duration.value_or(0);
      job.end = job.end ? std::max(*job.end, end) : end;
    }
    job.nodes.push_back(std::move(node));
  }
  std::vector<JobSummary> out;
  out.reserve(jobs.size());
  for (auto& [id, job] : jobs) {
    std::sort(job.nodes.begin(), job.nodes.end(), [](const JobNode& a, const JobNode& b) {
      const auto ra = RankOrder(a.rank);
      const auto rb = RankOrder(b.rank);
      return ra != rb ? ra < rb : a.dir < b.dir;
    });
    NameNodes(job.nodes);
    out.push_back(std::move(job));
  }
  std::stable_sort(out.begin(), out.end(), [](const JobSummary& a, const JobSummary& b) {
    const double sa = a.start.value_or(-std::numeric_limits<double>::infinity());
    const double sb = b.start.value_or(-std::numeric_limits<double>::infinity());
    return sa != sb ? sa > sb : a.id < b.id;
  });
  return out;
}

ApiResponse ListJobs(const RunStore& store, const QueryParams& params) {
  const auto offset = IntParam(params, "offset", 0, 0, std::numeric_limits<int>::max());
  if (!offset) return ErrorResponse(400, offset.error());
  const auto limit = IntParam(params, "limit", 100, 1, 1000);
  if (!limit) return ErrorResponse(400, limit.error());
  const auto jobs = GroupJobs(store.Runs(), WallSeconds());
  json list = json::array();
  const auto first = static_cast<size_t>(std::min<long long>(*offset, static_cast<long long>(jobs.size())));
  const size_t last = std::min(jobs.size(), first + static_cast<size_t>(*limit));
  for (size_t i = first; i < last; ++i) list.push_back(JobJson(jobs[i]));
  const json body = {{"total", jobs.size()}, {"offset", *offset}, {"jobs", std::move(list)}};
  return {200, "application/json", body.dump(), {}};
}

ApiResponse DescribeJob(RunStore& store, std::string_view job_id) {
  auto locked = LockJob(store, job_id);
  if (!locked) return FromError(locked.error());
  // The metric keys of the charted nodes, in catalog order.
  std::map<std::string, runview::KeyIdentity> keys;
  for (const auto& run : locked->runs) {
    if (run == nullptr) continue;
    for (const auto& [key, series] : run->model.system_series()) {
      if (!keys.count(key)) keys.emplace(key, runview::IdentifySystemKey(key));
    }
  }
  std::vector<std::string> ordered;
  ordered.reserve(keys.size());
  for (const auto& [key, identity] : keys) ordered.push_back(key);
  std::stable_sort(ordered.begin(), ordered.end(), [&](const std::string& a, const std::string& b) {
    return keys.at(a).order < keys.at(b).order;
  });
  json key_list = json::array();
  for (const auto& key : ordered) {
    const auto [title, unit] = KeyTitle(key);
    key_list.push_back({{"key", Text(key)}, {"title", Text(title)}, {"unit", Text(unit)}});
  }
  json body = JobJson(locked->job);
  body["keys"] = std::move(key_list);
  body["charted_nodes"] = locked->runs.size();
  body["loading"] = locked->loading;
  body["warning"] = locked->warning.empty() ? json(nullptr) : json(locked->warning);
  return {200, "application/json", body.dump(), {}};
}

ApiResponse JobSeries(RunStore& store, std::string_view job_id, const QueryParams& params) {
  const auto key = Param(params, "key");
  if (!key || key->empty() || key->size() > kMaxKeyBytes) {
    return ErrorResponse(400, fmt::format("key: give a metric key of 1 to {} bytes", kMaxKeyBytes));
  }
  const auto width = IntParam(params, "width", 800, 1, kMaxWidth);
  if (!width) return ErrorResponse(400, width.error());
  const auto start = NumberParam(params, "start");
  if (!start) return ErrorResponse(400, start.error());
  const auto end = NumberParam(params, "end");
  if (!end) return ErrorResponse(400, end.error());
  for (const auto& [name, value] : {std::pair{"start", *start}, std::pair{"end", *end}}) {
    if (value && std::abs(*value) > kMaxRangeSeconds) {
      return ErrorResponse(
          400, fmt::format("{}: at most {:g} seconds from the job's start", name, kMaxRangeSeconds));
    }
  }
  if (*start && *end && **end <= **start) return ErrorResponse(400, "end: must be greater than start");
  auto locked = LockJob(store, job_id);
  if (!locked) return FromError(locked.error());

  // The job's clock: seconds since its earliest node's time origin.
  std::optional<double> origin;
  for (const auto& run : locked->runs) {
    if (run == nullptr || !run->model.time_origin()) continue;
    origin = origin ? std::min(*origin, *run->model.time_origin()) : *run->model.time_origin();
  }
  std::vector<runview::NodeTrack> tracks(locked->runs.size());
  double data_start = 0;
  double data_end = 0;
  bool any = false;
  for (size_t i = 0; i < locked->runs.size(); ++i) {
    const auto& run = locked->runs[i];
    if (run == nullptr || !run->model.time_origin()) continue;
    const auto& all = run->model.system_series();
    const auto it = all.find(*key);
    if (it == all.end() || it->second.empty()) continue;
    const double offset = *run->model.time_origin() - *origin;
    tracks[i] = {&it->second, offset};
    data_start = any ? std::min(data_start, offset + it->second.first_x()) : offset + it->second.first_x();
    data_end = any ? std::max(data_end, offset + it->second.last_x()) : offset + it->second.last_x();
    any = true;
  }
  if (!any) {
    return ErrorResponse(404,
                         fmt::format("no metric '{}' in job '{}'", ToValidUtf8(*key), ToValidUtf8(job_id)));
  }
  const double range_start = start->value_or(data_start);
  double range_end = end->value_or(data_end);
  if (range_end <= range_start) range_end = range_start + 1;
  // Every bucket costs a number per node and seven for the band: the cells' cap keeps the answer small.
  const size_t max_buckets =
      std::max<size_t>(1, std::min(static_cast<size_t>(*width), kMaxChartCells / (tracks.size() + 7)));
  const runview::JobBand band = runview::ComputeJobBand(tracks, range_start, range_end, max_buckets);

  const auto [title, unit] = KeyTitle(*key);
  std::string out;
  out.reserve(256 + band.t.size() * 12 * (tracks.size() + 7));
  out += "{\"job_id\":" + JsonString(locked->job.id) + ",\"key\":" + JsonString(*key) +
         ",\"title\":" + JsonString(title) + ",\"unit\":" + JsonString(unit) + ",\"start_time\":";
  AppendNumber(out, *origin);
  out += ",\"start\":";
  AppendNumber(out, band.start);
  out += ",\"end\":";
  AppendNumber(out, band.end);
  out += ",\"bucket\":";
  AppendNumber(out, band.bucket);
  out += fmt::format(",\"width\":{},\"loading\":{},\"warning\":", band.buckets, locked->loading);
  out += locked->warning.empty() ? "null" : JsonString(locked->warning);
  out += ",\"nodes\":[";
  for (size_t i = 0; i < tracks.size(); ++i) {
    const JobNode& node = locked->job.nodes[i];
    if (i > 0) out += ',';
    out += "{\"node\":" + JsonString(node.name) + ",\"node_rank\":" + JsonString(node.rank) +
           ",\"run\":" + JsonString(node.dir) + ",\"run_name\":" + JsonString(node.run_name) +
           ",\"host\":" + JsonString(node.host) + ",\"values\":";
    AppendValues(out, band.node_values[i]);
    out += '}';
  }
  out += "],\"band\":{\"t\":[";
  for (size_t i = 0; i < band.t.size(); ++i) {
    if (i > 0) out += ',';
    AppendNumber(out, band.t[i]);
  }
  out += "],";
  AppendBandColumn(out, "min", band.band,
                   [&](const auto& p) { AppendNumber(out, static_cast<float>(p.min)); });
  out += ',';
  AppendBandColumn(out, "median", band.band,
                   [&](const auto& p) { AppendNumber(out, static_cast<float>(p.median)); });
  out += ',';
  AppendBandColumn(out, "max", band.band,
                   [&](const auto& p) { AppendNumber(out, static_cast<float>(p.max)); });
  out += ',';
  AppendBandColumn(out, "min_node", band.band, [&](const auto& p) { out += std::to_string(p.min_node); });
  out += ',';
  AppendBandColumn(out, "max_node", band.band, [&](const auto& p) { out += std::to_string(p.max_node); });
  out += ',';
  AppendBandColumn(out, "count", band.band, [&](const auto& p) { out += std::to_string(p.nodes); });
  out += "}}";
  return {200, "application/json", std::move(out), {}};
}

}  // namespace runmon::web
