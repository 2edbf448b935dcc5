// A run's console lines for the dashboard (see console_api.hpp). The run is locked exclusively while its
// lines are read: ConsoleLog builds its open lines (those that may still change) on the first read after a
// change and keeps them in its own state, so two readers under a shared lock would race there.
#include "web/console_api.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "web/api_common.hpp"

namespace runmon::web {
namespace {

using runview::ConsoleLine;
using runview::ConsoleStream;

// Line numbers in JSON are exact up to 2^53 - 1.
constexpr long long kMaxLineNumber = (1LL << 53) - 1;
// The bytes an answer's fields other than its lines take, with room to spare.
constexpr size_t kEnvelopeBytes = 512;
// A line's JSON: its text escaped (a control character takes 6 bytes, \u001b) and its other fields.
constexpr size_t kMaxLineJsonBytes = 6 * kMaxConsoleLineBytes + 128;
static_assert(kEnvelopeBytes + kMaxLineJsonBytes <= kMaxConsoleBytes, "a cut line must fit in an answer");
// Lines that may still change in place: the emulator's rows of both streams (runview/console_log.hpp).
constexpr uint64_t kOpenLines = 2 * runview::ConsoleLog::kRows;

enum class StreamFilter { kAll, kStdout, kStderr };

struct ConsoleQuery {
  std::optional<uint64_t> after;
  std::optional<uint64_t> before;
  size_t limit = 0;
  std::string needle;  // lowercased; empty matches every line
  StreamFilter stream = StreamFilter::kAll;
};

Result<std::optional<uint64_t>> LineNumberParam(const QueryParams& params, const std::string& name) {
  if (!Param(params, name)) return std::optional<uint64_t>();
  const auto value = IntParam(params, name, 0, 0, kMaxLineNumber);
  if (!value) return Error{value.error()};
  return std::optional<uint64_t>(static_cast<uint64_t>(*value));
}

Result<ConsoleQuery> ParseQuery(const QueryParams& params) {
  ConsoleQuery query;
  auto after = LineNumberParam(params, "after");
  if (!after) return Error{after.error()};
  auto before = LineNumberParam(params, "before");
  if (!before) return Error{before.error()};
  if (*after && *before) return Error{"give after or before, not both"};
  query.after = *after;
  query.before = *before;
  const auto limit = IntParam(params, "limit", kDefaultConsoleLimit, 1, kMaxConsoleLimit);
  if (!limit) return Error{limit.error()};
  query.limit = static_cast<size_t>(*limit);
  const std::string text = Param(params, "q").value_or("");
  if (text.size() > kMaxConsoleQueryBytes) {
    return Error{fmt::format("q: at most {} bytes", kMaxConsoleQueryBytes)};
  }
  query.needle = AsciiLowercase(text);
  const std::string stream = Param(params, "stream").value_or("all");
  if (stream == "stdout") {
    query.stream = StreamFilter::kStdout;
  } else if (stream == "stderr") {
    query.stream = StreamFilter::kStderr;
  } else if (stream != "all") {
    return Error{fmt::format("stream: '{}' is not stdout, stderr or all", ToValidUtf8(stream))};
  }
  return query;
}

bool Matches(const ConsoleLine& line, const ConsoleQuery& query) {
  if (query.stream == StreamFilter::kStdout && line.stream != ConsoleStream::kStdout) return false;
  if (query.stream == StreamFilter::kStderr && line.stream != ConsoleStream::kStderr) return false;
  if (query.needle.empty()) return true;
  return AsciiLowercase(StripEscapeSequences(line.text)).find(query.needle) != std::string::npos;
}

// The longest start of `text` of at most `max_bytes` that ends between two UTF-8 characters.
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string LineJson(const ConsoleLine& line) {
  const std::string_view text = Utf8Prefix(line.text, kMaxConsoleLineBytes);
  std::string out = fmt::format("{{\"n\":{},\"t\":", line.number);
  AppendNumber(out, line.timestamp);
  out += line.stream == ConsoleStream::kStderr ? ",\"stderr\":true" : ",\"stderr\":false";
  out += ",\"text\":" + JsonString(text);
  if (text.size() < line.text.size()) out += ",\"cut\":true";
  out += '}';
  return out;
}

// The lines of one answer: every line numbered in [from, to) that matches was sent.
struct Page {
  uint64_t from = 0;
  uint64_t to = 0;
  std::vector<std::string> lines;  // as JSON, oldest first
  size_t bytes = 0;

  // Adds a line unless the answer would pass its size; the first line always fits.
  bool Add(std::string line) {
    if (!lines.empty() && kEnvelopeBytes + bytes + line.size() + 1 > kMaxConsoleBytes) return false;
    bytes += line.size() + 1;
    lines.push_back(std::move(line));
    return true;
  }
};

Page Forwards(const runview::ConsoleLog& log, const ConsoleQuery& query, uint64_t after) {
  const uint64_t first = log.first_number();
  Page page;
  page.from = std::max(after, first);
  uint64_t number = page.from;
  for (; number < log.lines_started() && page.lines.size() < query.limit; ++number) {
    const ConsoleLine& line = log.at(static_cast<size_t>(number - first));
    if (Matches(line, query) && !page.Add(LineJson(line))) break;
  }
  page.to = number;
  return page;
}

// The last lines numbered below `before` (all held lines when it is past the end).
Page Backwards(const runview::ConsoleLog& log, const ConsoleQuery& query, uint64_t before) {
  const uint64_t first = log.first_number();
  Page page;
  page.to = std::min(before, log.lines_started());
  uint64_t number = page.to;
  for (; number > first && page.lines.size() < query.limit; --number) {
    const ConsoleLine& line = log.at(static_cast<size_t>(number - 1 - first));
    if (Matches(line, query) && !page.Add(LineJson(line))) break;
  }
  page.from = number;
  std::reverse(page.lines.begin(), page.lines.end());
  return page;
}

}  // namespace

std::string StripEscapeSequences(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const size_t escape = std::min(text.find('\x1b', i), text.size());
    out.append(text.substr(i, escape - i));
    if (escape + 1 >= text.size()) break;  // the end, or a lone ESC there
    const char kind = text[escape + 1];
    if (kind == '[') {
      // CSI: parameter and intermediate bytes 0x20-0x3F, then a final byte 0x40-0x7E.
      size_t end = escape + 2;
      while (end < text.size() && text[end] >= 0x20 && text[end] <= 0x3F) ++end;
      i = end < text.size() && text[end] >= 0x40 && text[end] <= 0x7E ? end + 1 : end;
    } else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^') {
      // OSC, DCS, APC, PM: up to BEL or ESC \ (or the end).
      size_t end = escape + 2;
      while (end < text.size() && text[end] != '\x07' &&
             !(text[end] == '\x1b' && end + 1 < text.size() && text[end + 1] == '\\')) {
        ++end;
      }
      i = end >= text.size() ? end : end + (text[end] == '\x07' ? 1 : 2);
    } else {
      i = escape + 2;  // a two-byte escape (ESC 7, ESC =, ...)
    }
  }
  return out;
}

ApiResponse ConsoleLines(RunStore& store, std::string_view dir, const QueryParams& params) {
  const auto query = ParseQuery(params);
  if (!query) return ErrorResponse(400, query.error());
  if (!store.FindRun(dir))
    return ErrorResponse(404, fmt::format("no run '{}' in the logdir", ToValidUtf8(dir)));
  auto run = store.Acquire(dir);
  if (run == nullptr)
    return ErrorResponse(404, fmt::format("run '{}' has no readable log", ToValidUtf8(dir)));
  std::unique_lock lock(run->mutex);
  const runview::ConsoleLog& log = run->model.console();
  const Page page = query->after ? Forwards(log, *query, *query->after)
                                 : Backwards(log, *query, query->before.value_or(log.lines_started()));
  const uint64_t total = log.lines_started();
  const uint64_t settled = std::max(log.first_number(), total > kOpenLines ? total - kOpenLines : 0);
  std::string out;
  out.reserve(kEnvelopeBytes + page.bytes);
  out += fmt::format(
      "{{\"first\":{},\"total\":{},\"dropped\":{},\"settled\":{},\"prev\":{},\"next\":{},\"loading\":{},"
      "\"lines\":[",
      log.first_number(), total, log.dropped(), settled, page.from, page.to, !run->caught_up);
  for (size_t i = 0; i < page.lines.size(); ++i) {
    if (i > 0) out += ',';
    out += page.lines[i];
  }
  out += "]}";
  return {200, "application/json", std::move(out), {}};
}

}  // namespace runmon::web
