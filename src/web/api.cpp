// The JSON API's handlers. See api.hpp and docs/serve-api.md.
#include "web/api.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <re2/re2.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "core/wall_clock.hpp"
#include "runview/detail_reader.hpp"
#include "runview/metric_groups.hpp"
#include "runview/workspace.hpp"
#include "web/api_common.hpp"
#include "web/downsample.hpp"

namespace runmon::web {
namespace {

using nlohmann::json;

constexpr size_t kMaxRunsPerChart = 16;
constexpr int kMaxWidth = 2000;
constexpr size_t kMaxPatternBytes = 1024;
constexpr size_t kMaxChartBytes = 200 * 1000;

json OptionalNumber(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string SectionName(runview::ChartSection section) {
  switch (section) {
    case runview::ChartSection::kSystem:
      return "system";
    case runview::ChartSection::kOther:
      return "other";
    case runview::ChartSection::kLogged:
      return "logged";
  }
  return "system";
}

json Text(std::string_view text) {
  return json(ToValidUtf8(text));
}

// The runs a chart request names, each locked for reading for as long as this lives.
struct LockedRuns {
  std::vector<std::shared_ptr<LoadedRun>> runs;
  std::vector<std::shared_lock<std::shared_mutex>> locks;
  std::vector<const runview::RunModel*> models;
  std::vector<std::string> labels;
};

// `complete`: wait (up to a minute) until every run has been read to its end before locking them, for
// answers that must hold every point (CSV); charts answer with what is loaded and say "loading".
Result<LockedRuns> LockRuns(RunStore& store, const QueryParams& params, bool complete = false) {
  const auto runs_text = Param(params, "runs");
  if (!runs_text) return Error{"runs: missing (comma-separated run directories)"};
  const auto dirs = SplitList(*runs_text);
  if (dirs.empty() || dirs.size() > kMaxRunsPerChart) {
    return Error{fmt::format("runs: give 1 to {} run directories", kMaxRunsPerChart)};
  }
  LockedRuns locked;
  for (const auto& dir : dirs) {
    auto run = store.Acquire(dir);
    if (run == nullptr) return Error{fmt::format("404:no run '{}' with a readable log", ToValidUtf8(dir))};
    locked.runs.push_back(std::move(run));
  }
  if (complete) {
    for (const auto& run : locked.runs) {
      if (!store.WaitUntilLoaded(*run, std::chrono::minutes(1))) {
        return Error{fmt::format("503:run '{}' is still being read; try again", ToValidUtf8(run->dir))};
      }
    }
  }
  for (const auto& run : locked.runs) {
    locked.locks.emplace_back(run->mutex);
    locked.models.push_back(&run->model);
    locked.labels.push_back(DisplayName(run->model.overview(), run->dir));
  }
  return locked;
}

struct SelectedSeries {
  std::string title;
  std::string unit;
  std::string x_axis = "time";
  std::vector<runview::ChartMember> members;
};

Result<SelectedSeries> SelectSeries(const LockedRuns& locked, const QueryParams& params) {
  const auto chart = Param(params, "chart");
  const auto keys = Param(params, "keys");
  const auto match = Param(params, "match");
  if (static_cast<int>(chart.has_value()) + static_cast<int>(keys.has_value()) +
          static_cast<int>(match.has_value()) !=
      1) {
    return Error{"give exactly one of chart, keys or match"};
  }
  SelectedSeries selected;
  if (chart) {
    for (const bool history : {false, true}) {
      auto groups = history ? runview::GroupHistoryCharts(locked.models, locked.labels)
                            : runview::GroupSystemCharts(locked.models, locked.labels);
      for (auto& group : groups) {
        if (group.id != *chart) continue;
        selected.title = group.title;
        selected.unit = group.unit;
        selected.x_axis = history ? "step" : "time";
        selected.members = std::move(group.members);
        return selected;
      }
    }
    return Error{fmt::format("404:no chart '{}' in these runs", ToValidUtf8(*chart))};
  }
  std::unique_ptr<RE2> regex;
  std::set<std::string> wanted;
  if (keys) {
    const auto list = SplitList(*keys);
    if (list.empty() || list.size() > 100) return Error{"keys: give 1 to 100 keys"};
    wanted.insert(list.begin(), list.end());
    selected.title = list.size() == 1 ? list.front() : fmt::format("{} metrics", list.size());
  } else {
    if (match->empty() || match->size() > kMaxPatternBytes) {
      return Error{fmt::format("match: give a regular expression of 1 to {} bytes", kMaxPatternBytes)};
    }
    RE2::Options options;
    options.set_case_sensitive(false);
    options.set_log_errors(false);
    options.set_max_mem(8 << 20);
    regex = std::make_unique<RE2>(*match, options);
    if (!regex->ok()) return Error{fmt::format("match: {}", regex->error())};
    selected.title = *match;
  }
  bool any_time = false;
  std::set<std::string> units;
  for (size_t run = 0; run < locked.models.size(); ++run) {
    const std::string prefix = locked.models.size() > 1 ? locked.labels[run] + " " : "";
    for (const bool history : {false, true}) {
      const auto& all = history ? locked.models[run]->history_series() : locked.models[run]->system_series();
      for (const auto& [key, data] : all) {
        const bool wanted_key = regex ? RE2::PartialMatch(key, *regex) : wanted.count(key) > 0;
        if (!wanted_key) continue;
        selected.members.push_back({key, prefix + key, run, &data});
        any_time = any_time || !history;
        units.insert(history ? "" : runview::IdentifySystemKey(key).unit);
      }
    }
  }
  selected.x_axis = any_time || selected.members.empty() ? "time" : "step";
  if (units.size() == 1) selected.unit = *units.begin();
  return selected;
}

// For runs loaded from their summary index, points the summaries only outline: the data to chart for each
// member of `selected` (its series, or for a system series the full-resolution points over [start, end] when
// the window covers at most `max_segments` of the log's segments, read from the log; wider windows keep the
// summaries, which are then finer than the chart). `windows` keeps the points read alive.
std::vector<const runview::TimeSeries*> ChartedData(
    const LockedRuns& locked, const SelectedSeries& selected, double start, double end, size_t max_segments,
    std::vector<std::shared_ptr<const runview::DetailWindow>>& windows) {
  std::vector<const runview::TimeSeries*> data;
  for (const auto& member : selected.members) data.push_back(member.data);
  for (size_t run = 0; run < locked.models.size(); ++run) {
    const runview::RunModel& model = *locked.models[run];
    const auto& detail = model.detail();
    if (!detail || detail->SegmentsIn(start, end) > max_segments) continue;
    const auto is_system = [&](const runview::ChartMember& member) {
      const auto found = model.system_series().find(member.key);
      return member.run == run && found != model.system_series().end() && &found->second == member.data;
    };
    std::vector<std::string> keys;
    for (const auto& member : selected.members) {
      if (is_system(member)) keys.push_back(member.key);
    }
    if (keys.empty()) continue;
    auto window = detail->Window(start, end, keys, model, max_segments);
    if (!window) continue;
    for (size_t m = 0; m < selected.members.size(); ++m) {
      if (!is_system(selected.members[m])) continue;
      if (const auto points = window->series.find(selected.members[m].key); points != window->series.end()) {
        data[m] = &points->second;
      }
    }
    windows.push_back(std::move(window));
  }
  return data;
}

// The chart response's JSON, written by hand: numbers in their shortest form keep it small.
std::string ChartBody(const SelectedSeries& selected, const LockedRuns& locked, const ChartData& data,
                      bool loading) {
  std::string out;
  out.reserve(64 + data.x.size() * 10 * (1 + selected.members.size()));
  out += "{\"title\":" + JsonString(selected.title) + ",\"unit\":" + JsonString(selected.unit) +
         ",\"x_axis\":" + JsonString(selected.x_axis) + ",\"start\":";
  AppendNumber(out, data.start);
  out += ",\"end\":";
  AppendNumber(out, data.end);
  out += fmt::format(",\"width\":{},\"raw\":{},\"loading\":{},\"x\":[", data.width, data.raw, loading);
  for (size_t i = 0; i < data.x.size(); ++i) {
    if (i > 0) out += ',';
    AppendNumber(out, static_cast<float>(data.x[i]));
  }
  out += "],\"series\":[";
  for (size_t k = 0; k < selected.members.size(); ++k) {
    const auto& member = selected.members[k];
    if (k > 0) out += ',';
    out += "{\"run\":" + JsonString(locked.runs[member.run]->dir) +
           ",\"run_name\":" + JsonString(locked.labels[member.run]) + ",\"key\":" + JsonString(member.key) +
           ",\"name\":" + JsonString(member.series) + ",\"last\":";
    if (member.data->empty()) {
      out += "null";
    } else {
      AppendNumber(out, member.data->last_y());
    }
    out += ",\"values\":";
    AppendValues(out, data.values[k]);
    out += '}';
  }
  out += "]}";
  return out;
}

// The runs table's warning: the log cannot be read, or damage was seen in its head or tail.
json RowWarning(const RunRow& run) {
  if (!run.summary) return nullptr;
  if (!run.summary->verdict.reason.empty()) return Text(run.summary->verdict.reason);
  if (!run.summary->warning.empty()) return Text(run.summary->warning);
  return nullptr;
}

}  // namespace

std::string JsonString(std::string_view text) {
  return json(ToValidUtf8(text)).dump();
}

ApiResponse ErrorResponse(int status, std::string_view message) {
  return {status, "application/json", json{{"error", ToValidUtf8(message)}}.dump(), {}};
}

ApiResponse ListRuns(const RunStore& store, const QueryParams& params) {
  const auto offset = IntParam(params, "offset", 0, 0, std::numeric_limits<int>::max());
  if (!offset) return ErrorResponse(400, offset.error());
  const auto limit = IntParam(params, "limit", 100, 1, 1000);
  if (!limit) return ErrorResponse(400, limit.error());
  const std::string sort = Param(params, "sort").value_or("start");
  static const std::set<std::string> kSorts = {"start", "name", "state",   "duration",
                                               "host",  "id",   "command", "gpu"};
  if (kSorts.count(sort) == 0) {
    return ErrorResponse(
        400, fmt::format("sort: '{}' is not start, name, state, duration, host, id, command or gpu",
                         ToValidUtf8(sort)));
  }
  const std::string order = Param(params, "order").value_or("desc");
  if (order != "asc" && order != "desc") return ErrorResponse(400, "order: asc or desc");
  const std::string query = AsciiLowercase(Param(params, "q").value_or(""));
  if (query.size() > 256) return ErrorResponse(400, "q: at most 256 bytes");

  struct Row {
    json value;
    std::string sort_text;
    double sort_number = 0;
    std::string dir;
  };
  std::vector<Row> rows;
  for (const auto& run : store.Runs()) {
    const std::string& dir = run.entry.directory_name;
    const runview::RunOverview empty;
    const runview::RunOverview& overview = run.summary ? run.summary->overview : empty;
    const std::string name = DisplayName(overview, run.entry.id.empty() ? dir : run.entry.id);
    const std::string id = overview.id.empty() ? run.entry.id : overview.id;
    const std::string state =
        !run.summary ? "unknown" : std::string(runview::RunStateName(run.summary->verdict.state));
    std::optional<double> start = overview.start_time;
    std::optional<double> duration;
    if (run.summary) duration = runview::RunRuntime(overview, run.summary->verdict.state, WallSeconds());
    if (!query.empty()) {
      const std::string haystack =
          AsciiLowercase(name + "\n" + id + "\n" + overview.host + "\n" + overview.command + "\n" +
                         overview.project + "\n" + overview.gpu_type + "\n" + overview.job_id + "\n" + dir);
      if (haystack.find(query) == std::string::npos) continue;
    }
    Row row;
    row.dir = dir;
    row.value = {{"dir", Text(dir)},
                 {"id", Text(id)},
                 {"name", Text(name)},
                 {"project", Text(overview.project)},
                 {"state", state},
                 {"start", OptionalNumber(start)},
                 {"duration", OptionalNumber(duration)},
                 {"host", Text(overview.host)},
                 {"command", Text(overview.command)},
                 {"gpu", Text(overview.gpu_type)},
                 {"gpu_count", overview.gpu_count},
                 {"job_id", overview.job_id.empty() ? json(nullptr) : Text(overview.job_id)},
                 {"node_rank", overview.job_id.empty() ? json(nullptr) : Text(overview.node_rank)},
                 {"warning", RowWarning(run)}};
    if (sort == "start") {
      row.sort_number = start.value_or(-1);
      row.sort_text = run.entry.stamp;
    } else if (sort == "duration") {
      row.sort_number = duration.value_or(-1);
    } else {
      const std::map<std::string, std::string> texts = {{"name", name},
                                                        {"state", state},
                                                        {"host", overview.host},
                                                        {"id", id},
                                                        {"command", overview.command},
                                                        {"gpu", overview.gpu_type}};
      row.sort_text = AsciiLowercase(texts.at(sort));
    }
    rows.push_back(std::move(row));
  }
  const bool numeric = sort == "start" || sort == "duration";
  const bool ascending = order == "asc";
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (numeric && a.sort_number != b.sort_number) {
      return ascending ? a.sort_number < b.sort_number : a.sort_number > b.sort_number;
    }
    if (a.sort_text != b.sort_text) return ascending ? a.sort_text < b.sort_text : a.sort_text > b.sort_text;
    return ascending ? a.dir < b.dir : a.dir > b.dir;
  });
  json runs = json::array();
  const auto first = static_cast<size_t>(std::min<long long>(*offset, static_cast<long long>(rows.size())));
  const size_t last = std::min(rows.size(), first + static_cast<size_t>(*limit));
  for (size_t i = first; i < last; ++i) runs.push_back(std::move(rows[i].value));
  const std::string scan_error = store.scan_error();
  json body = {{"total", rows.size()},
               {"offset", *offset},
               {"logdir", Text(store.logdir().string())},
               {"warning", scan_error.empty() ? json(nullptr) : Text(scan_error)},
               {"runs", std::move(runs)}};
  return {200, "application/json", body.dump(), {}};
}

ApiResponse DescribeRun(RunStore& store, std::string_view dir) {
  if (!store.FindRun(dir))
    return ErrorResponse(404, fmt::format("no run '{}' in the logdir", ToValidUtf8(dir)));
  auto run = store.Acquire(dir);
  if (run == nullptr)
    return ErrorResponse(404, fmt::format("run '{}' has no readable log", ToValidUtf8(dir)));
  std::shared_lock lock(run->mutex);
  const runview::RunModel& model = run->model;
  const runview::RunOverview& overview = model.overview();
  json environment = json::array();
  for (const auto& [label, value] : overview.environment) environment.push_back({Text(label), Text(value)});
  json config = json::array();
  for (const auto& [key, value] : overview.config) config.push_back({Text(key), Text(value)});
  json warnings = json::array();
  for (const auto& warning : run->loader->Warnings()) warnings.push_back(Text(warning));
  if (model.skipped_values() > 0) {
    warnings.push_back(fmt::format("{} values were not numbers and are not charted", model.skipped_values()));
  }
  json charts = json::array();
  const std::vector<const runview::RunModel*> models = {&model};
  for (const bool history : {false, true}) {
    const auto groups =
        history ? runview::GroupHistoryCharts(models, {}) : runview::GroupSystemCharts(models, {});
    for (const auto& group : groups) {
      json series = json::array();
      for (const auto& member : group.members)
        series.push_back({{"key", Text(member.key)}, {"name", Text(member.series)}});
      charts.push_back({{"id", Text(group.id)},
                        {"title", Text(group.title)},
                        {"unit", Text(group.unit)},
                        {"section", SectionName(group.section)},
                        {"x_axis", history ? "step" : "time"},
                        {"series", std::move(series)}});
    }
  }
  json body = {{"dir", Text(run->dir)},
               {"id", Text(overview.id)},
               {"name", Text(DisplayName(overview, run->dir))},
               {"project", Text(overview.project)},
               {"host", Text(overview.host)},
               {"command", Text(overview.command)},
               {"gpu", Text(overview.gpu_type)},
               {"gpu_count", overview.gpu_count},
               {"job_id", overview.job_id.empty() ? json(nullptr) : Text(overview.job_id)},
               {"node_rank", overview.job_id.empty() ? json(nullptr) : Text(overview.node_rank)},
               {"state", std::string(runview::RunStateName(run->state))},
               {"exit_code", overview.exit_code ? json(*overview.exit_code) : json(nullptr)},
               {"start", OptionalNumber(overview.start_time)},
               {"duration", OptionalNumber(runview::RunRuntime(overview, run->state, WallSeconds()))},
               {"samples", model.stats_records()},
               {"console_lines", model.console().lines_started()},
               {"loading", !run->caught_up},
               {"warnings", std::move(warnings)},
               {"environment", std::move(environment)},
               {"config", std::move(config)},
               {"charts", std::move(charts)}};
  return {200, "application/json", body.dump(), {}};
}

ApiResponse ChartJson(RunStore& store, const QueryParams& params) {
  const auto width = IntParam(params, "width", 800, 1, kMaxWidth);
  if (!width) return ErrorResponse(400, width.error());
  const auto start = NumberParam(params, "start");
  if (!start) return ErrorResponse(400, start.error());
  const auto end = NumberParam(params, "end");
  if (!end) return ErrorResponse(400, end.error());
  if (*start && *end && **end <= **start) return ErrorResponse(400, "end: must be greater than start");
  auto locked = LockRuns(store, params);
  if (!locked) return FromError(locked.error());
  auto selected = SelectSeries(*locked, params);
  if (!selected) return FromError(selected.error());

  std::vector<const runview::TimeSeries*> series;
  double x_min = 0;
  double x_max = 0;
  bool any = false;
  for (const auto& member : selected->members) {
    series.push_back(member.data);
    if (member.data->empty()) continue;
    x_min = any ? std::min(x_min, member.data->first_x()) : member.data->first_x();
    x_max = any ? std::max(x_max, member.data->last_x()) : member.data->last_x();
    any = true;
  }
  const double range_start = start->value_or(x_min);
  double range_end = end->value_or(x_max);
  if (range_end <= range_start) range_end = range_start + 1;
  bool loading = false;
  for (const auto& run : locked->runs) loading = loading || !run->caught_up;
  std::vector<std::shared_ptr<const runview::DetailWindow>> windows;
  series = ChartedData(*locked, *selected, range_start, range_end, runview::DetailReader::kMaxWindowSegments,
                       windows);
  // The bucket count keeps the response under kMaxChartBytes; numbers longer than usual (many digits,
  // exponents) can still overshoot it, and then fewer buckets are tried.
  std::string out;
  for (int buckets = static_cast<int>(*width);; buckets = std::max(1, buckets * 2 / 3)) {
    out = ChartBody(*selected, *locked, Downsample(series, range_start, range_end, buckets), loading);
    if (out.size() <= kMaxChartBytes || buckets == 1) break;
  }
  return {200, "application/json", std::move(out), {}};
}

ApiResponse ChartCsv(RunStore& store, const QueryParams& params) {
  auto locked = LockRuns(store, params, true);
  if (!locked) return FromError(locked.error());
  auto selected = SelectSeries(*locked, params);
  if (!selected) return FromError(selected.error());
  // Every point: the summarised part of a long run is read back from its log.
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<std::shared_ptr<const runview::DetailWindow>> windows;
  const auto data = ChartedData(*locked, *selected, -infinity, infinity, SIZE_MAX, windows);
  const auto quote = [](std::string_view text) {
    const std::string valid = ToValidUtf8(text);
    if (valid.find_first_of(",\"\r\n") == std::string::npos) return valid;
    std::string quoted = "\"";
    for (const char c : valid) {
      if (c == '"') quoted += '"';
      quoted += c;
    }
    return quoted + "\"";
  };
  std::string out = "run,key,x,value\n";
  for (size_t m = 0; m < selected->members.size(); ++m) {
    const auto& member = selected->members[m];
    const runview::TimeSeries& points = *data[m];
    const std::string prefix = quote(locked->runs[member.run]->dir) + "," + quote(member.key) + ",";
    for (size_t i = 0; i < points.size(); ++i) {
      out += prefix;
      AppendNumber(out, points.x(i));
      out += ',';
      AppendNumber(out, points.y(i));
      out += '\n';
    }
  }
  std::string file = selected->title;
  for (char& c : file) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
      c = '_';
  }
  return {200,
          "text/csv; charset=utf-8",
          std::move(out),
          {{"Content-Disposition", fmt::format("attachment; filename=\"{}.csv\"", file.substr(0, 100))}}};
}

Result<std::string> ValidateLayout(std::string_view body) {
  if (body.size() > kMaxLayoutBytes)
    return Error{fmt::format("the layout is over {} bytes", kMaxLayoutBytes)};
  const json layout = json::parse(body, nullptr, false);
  if (layout.is_discarded() || !layout.is_object()) return Error{"the layout is not a JSON object"};
  if (!layout.contains("version") || layout["version"] != 1) return Error{"version: must be 1"};
  if (!layout.contains("panels") || !layout["panels"].is_array()) return Error{"panels: must be an array"};
  const auto& panels = layout["panels"];
  if (panels.size() > 100) return Error{"panels: at most 100"};
  json normal = {{"version", 1}, {"panels", json::array()}};
  std::set<std::string> ids;
  for (const auto& panel : panels) {
    if (!panel.is_object()) return Error{"panels: each panel must be an object"};
    if (!panel.contains("id") || !panel["id"].is_string()) return Error{"panel id: must be a string"};
    const std::string id = panel["id"];
    if (id.empty() || id.size() > 64 || !std::all_of(id.begin(), id.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                 c == '-';
        })) {
      return Error{"panel id: 1 to 64 characters of A-Z a-z 0-9 _ -"};
    }
    if (!ids.insert(id).second) return Error{fmt::format("panel id '{}' appears twice", id)};
    std::string title;
    if (panel.contains("title")) {
      if (!panel["title"].is_string()) return Error{"panel title: must be a string"};
      title = panel["title"];
      if (title.size() > 200) return Error{"panel title: at most 200 bytes"};
    }
    json keys = json::array();
    if (panel.contains("keys")) {
      if (!panel["keys"].is_array() || panel["keys"].size() > 100)
        return Error{"panel keys: an array of at most 100"};
      for (const auto& key : panel["keys"]) {
        if (!key.is_string() || key.get<std::string>().size() > 512)
          return Error{"panel keys: strings of at most 512 bytes"};
        keys.push_back(key);
      }
    }
    std::string match;
    if (panel.contains("match")) {
      if (!panel["match"].is_string()) return Error{"panel match: must be a string"};
      match = panel["match"];
      if (match.size() > kMaxPatternBytes) return Error{"panel match: at most 1024 bytes"};
      if (!match.empty()) {
        RE2::Options options;
        options.set_log_errors(false);
        RE2 regex(match, options);
        if (!regex.ok()) return Error{fmt::format("panel match: {}", regex.error())};
      }
    }
    if (keys.empty() && match.empty()) return Error{fmt::format("panel '{}': give keys or match", id)};
    normal["panels"].push_back({{"id", id}, {"title", title}, {"keys", keys}, {"match", match}});
  }
  return normal.dump(2);
}

ApiResponse GetLayout(const RunStore& store) {
  std::error_code error;
  const auto path = store.logdir() / std::string(kLayoutFileName);
  if (!std::filesystem::is_regular_file(path, error))
    return {200, "application/json", R"({"version":1,"panels":[]})", {}};
  std::string text;
  {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) return ErrorResponse(500, fmt::format("cannot read {}", path.string()));
    std::array<char, 8192> buffer{};
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0 && text.size() <= kMaxLayoutBytes) {
      text.append(buffer.data(), n);
    }
    std::fclose(file);
  }
  auto layout = ValidateLayout(text);
  if (!layout) {
    // A damaged file is not served as it is: an empty layout, and the reason.
    return {200,
            "application/json",
            json{{"version", 1},
                 {"panels", json::array()},
                 {"warning", "the saved layout was ignored: " + layout.error()}}
                .dump(),
            {}};
  }
  return {200, "application/json", *layout, {}};
}

ApiResponse PutLayout(const RunStore& store, std::string_view body) {
  auto layout = ValidateLayout(body);
  if (!layout) return ErrorResponse(body.size() > kMaxLayoutBytes ? 413 : 400, layout.error());
  std::error_code error;
  if (!std::filesystem::is_directory(store.logdir(), error)) {
    return ErrorResponse(409, fmt::format("the logdir {} does not exist", store.logdir().string()));
  }
  const auto status = runview::WriteWorkspaceFile(store.logdir(), kLayoutFileName, *layout + "\n");
  if (!status) return ErrorResponse(500, status.error());
  return {200, "application/json", *layout, {}};
}

}  // namespace runmon::web
