// The dashboard's HTTP server. See server.hpp.
#include "web/server.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "core/access.hpp"
#include "http_server/bounded_server.hpp"
#include "web/api.hpp"
#include "web/console_api.hpp"
#include "web/jobs.hpp"

namespace runmon::web {
namespace {

using http_server::BoundedServer;
// The bytes a layout body may take on the wire: the layout's cap with room for chunked framing. Reading
// stops there whatever the framing says (a chunk-size line without an end, say).
constexpr size_t kMaxBodyWireBytes = 1024 * 1024;
constexpr int kMaxEventStreams = 32;
constexpr auto kKeepAliveComment = std::chrono::seconds(15);
constexpr std::string_view kCookieName = "runmon_token";

void Send(httplib::Response& res, const ApiResponse& api) {
  res.status = api.status;
  for (const auto& [name, value] : api.headers) res.set_header(name, value);
  res.set_content(api.body, api.content_type);
}

QueryParams ToParams(const httplib::Params& params) {
  return QueryParams(params.begin(), params.end());
}

std::string CookieValue(const httplib::Request& req, std::string_view name) {
  const std::string cookies = req.get_header_value("Cookie");
  size_t start = 0;
  while (start < cookies.size()) {
    const size_t end = std::min(cookies.find(';', start), cookies.size());
    std::string_view part(cookies.data() + start, end - start);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.size() > name.size() && part.substr(0, name.size()) == name && part[name.size()] == '=') {
      return std::string(part.substr(name.size() + 1));
    }
    start = end + 1;
  }
  return {};
}

// The request's path and query without the token parameter (for the redirect that sets the cookie).
std::string WithoutToken(const httplib::Request& req) {
  std::string query;
  for (const auto& [name, value] : req.params) {
    if (name == "token") continue;
    query += (query.empty() ? "?" : "&") + httplib::detail::encode_query_param(name) + "=" +
             httplib::detail::encode_query_param(value);
  }
  return req.path + query;
}

http_server::ServerLimits Limits() {
  http_server::ServerLimits limits;
  limits.max_body_bytes = kMaxBodyWireBytes;
  return limits;
}

// Every error response, the library's own included, is {"error": "message"} (docs/serve-api.md).
void SendError(httplib::Response& res, int status, std::string_view message) {
  Send(res, ErrorResponse(status, message));
}

// A Content-Length over the cap (or not a number) is refused before a byte of the body is read.
std::optional<int> DeclaredLengthProblem(const httplib::Request& req) {
  const std::string length = req.get_header_value("Content-Length");
  if (length.empty()) return std::nullopt;
  size_t value = 0;
  const auto [end, error] = std::from_chars(length.data(), length.data() + length.size(), value);
  if (error == std::errc::result_out_of_range) return 413;
  if (error != std::errc() || end != length.data() + length.size()) return 400;
  if (value > kMaxLayoutBytes) return 413;
  return std::nullopt;
}

}  // namespace

Status CheckServeOptions(const ServeOptions& options) {
  if (options.port < 0 || options.port > 65535)
    return Error{fmt::format("--port: {} is not 0 to 65535", options.port)};
  if (options.host.empty()) return Error{"--host: empty"};
  if (!IsLoopbackAddress(options.host) && options.token.empty()) {
    return Error{
        fmt::format("--host {} would expose the runs beyond this machine: give --token too", options.host)};
  }
  if (!options.token.empty()) return CheckAccessToken(options.token, "--token");
  return OkStatus();
}

DashboardServer::DashboardServer(RunStore& store, ServeOptions options, std::span<const Asset> assets)
    : store_(store),
      options_(std::move(options)),
      assets_(assets),
      server_(std::make_unique<BoundedServer>(Limits(), SendError)) {
  server_->set_payload_max_length(kMaxLayoutBytes);
  Routes();
}

DashboardServer::~DashboardServer() {
  Stop();
}

Status DashboardServer::Bind() {
  auto port = server_->Bind(options_.host, options_.port);
  if (!port) return Error{port.error()};
  port_ = *port;
  return OkStatus();
}

void DashboardServer::Serve() {
  server_->Serve();
}

void DashboardServer::Stop() {
  store_.Stop();  // wakes the event streams
  server_->StopServing();
}

bool DashboardServer::Allowed(const httplib::Request& req, httplib::Response& res) const {
  if (options_.token.empty()) {
    // No token: loopback only, and the page must have been loaded from a loopback name.
    if (IsLoopbackHostHeader(req.get_header_value("Host"))) return true;
    SendError(res, 403, "this server answers only requests addressed to a loopback host");
    return false;
  }
  const std::string authorization = req.get_header_value("Authorization");
  if (authorization.starts_with("Bearer ") && SameSecret(authorization.substr(7), options_.token))
    return true;
  if (SameSecret(CookieValue(req, kCookieName), options_.token)) return true;
  if (req.has_param("token") && SameSecret(req.get_param_value("token"), options_.token)) {
    res.status = 303;
    res.set_header("Location", WithoutToken(req));
    res.set_header("Set-Cookie",
                   fmt::format("{}={}; HttpOnly; SameSite=Strict; Path=/", kCookieName, options_.token));
    return false;
  }
  SendError(res, 401, "a token is required: open the URL runmon serve printed (…/?token=…)");
  return false;
}

void DashboardServer::Routes() {
  BoundedServer& server = *server_;
  server.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                              {"X-Frame-Options", "DENY"},
                              {"Referrer-Policy", "no-referrer"},
                              {"Cache-Control", "no-store"},
                              {"Content-Security-Policy",
                               "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                               "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"}});

  server.SetRequestCheck([this](const httplib::Request& req, httplib::Response& res) {
    using Handled = httplib::Server::HandlerResponse;
    const bool allowed = Allowed(req, res);
    // Only the layout takes a body, which its handler reads under the cap; httplib would read any other
    // whole. A body left unread closes the connection after the answer.
    const bool layout = req.method == "PUT" && req.path == "/api/layout";
    if (!http_server::HasBody(req) || (layout && allowed))
      return allowed ? Handled::Unhandled : Handled::Handled;
    http_server::CloseAfterResponse(res);
    if (!allowed) return Handled::Handled;
    SendError(res, 413, "only PUT /api/layout takes a request body");
    return Handled::Handled;
  });

  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    Send(res, ErrorResponse(500, "internal error"));
  });

  server.Get("/api/runs", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, ListRuns(store_, ToParams(req.params)));
  });
  server.Get(R"(/api/runs/([^/]+)/console)", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, ConsoleLines(store_, req.matches[1].str(), ToParams(req.params)));
  });
  server.Get(R"(/api/runs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, DescribeRun(store_, req.matches[1].str()));
  });
  server.Get("/api/chart", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, ChartJson(store_, ToParams(req.params)));
  });
  server.Get("/api/chart.csv", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, ChartCsv(store_, ToParams(req.params)));
  });
  server.Get("/api/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, ListJobs(store_, ToParams(req.params)));
  });
  // Before the job's own route: a job id may hold "/" (the path is matched decoded), and "<id>/series" is
  // the series of the job <id>.
  server.Get(R"(/api/jobs/(.+)/series)", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, JobSeries(store_, req.matches[1].str(), ToParams(req.params)));
  });
  server.Get(R"(/api/jobs/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, DescribeJob(store_, req.matches[1].str()));
  });
  server.Get("/api/layout",
             [this](const httplib::Request&, httplib::Response& res) { Send(res, GetLayout(store_)); });
  // The layout is read here, not by httplib, which would read any body whole (a chunked one of any size)
  // before a handler could refuse it: reading stops as soon as the cap is passed.
  server.Put("/api/layout", [this](const httplib::Request& req, httplib::Response& res,
                                   const httplib::ContentReader& read_body) {
    const auto refuse = [&](int status, std::string_view message) {
      http_server::CloseAfterResponse(res);
      SendError(res, status, message);
    };
    const std::string over = fmt::format("the layout is over {} bytes", kMaxLayoutBytes);
    if (const auto problem = DeclaredLengthProblem(req)) {
      return refuse(*problem, *problem == 413 ? over : "Content-Length: not a number");
    }
    if (req.is_multipart_form_data()) return refuse(400, "the layout is a JSON document, not a form");
    std::string body;
    bool too_large = false;
    const bool whole = read_body([&](const char* data, size_t length) {
      too_large = body.size() + length > kMaxLayoutBytes;
      if (!too_large) body.append(data, length);
      return !too_large;
    });
    if (too_large) return refuse(413, over);
    if (!whole) return refuse(400, "the request body is malformed or did not arrive in time");
    Send(res, PutLayout(store_, body));
  });

  server.Get("/api/events", [this](const httplib::Request& req, httplib::Response& res) {
    static std::atomic<int> open_streams{0};
    if (open_streams.load() >= kMaxEventStreams) {
      Send(res, ErrorResponse(503, "too many event streams are open"));
      return;
    }
    struct Watched {
      std::shared_ptr<LoadedRun> run;
      uint64_t data_version = 0;
      runview::RunState state = runview::RunState::kRunning;
    };
    auto watched = std::make_shared<std::vector<Watched>>();
    if (req.has_param("runs")) {
      const std::string runs = req.get_param_value("runs");
      size_t start = 0;
      while (start < runs.size() && watched->size() < 16) {
        const size_t comma = std::min(runs.find(',', start), runs.size());
        if (auto run = store_.Acquire(runs.substr(start, comma - start))) {
          std::shared_lock lock(run->mutex);
          watched->push_back({run, run->model.data_version(), run->state});
        }
        start = comma + 1;
      }
    }
    ++open_streams;
    auto runs_version = std::make_shared<uint64_t>(store_.runs_version());
    auto seen = std::make_shared<uint64_t>(store_.version());
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, watched, runs_version, seen](size_t, httplib::DataSink& sink) {
          std::string out;
          if (!store_.WaitForChange(*seen, kKeepAliveComment)) return false;
          *seen = store_.version();
          if (store_.runs_version() != *runs_version) {
            *runs_version = store_.runs_version();
            out += "event: runs\ndata: {}\n\n";
          }
          for (auto& entry : *watched) {
            std::shared_lock lock(entry.run->mutex);
            const uint64_t version = entry.run->model.data_version();
            if (version == entry.data_version && entry.run->state == entry.state) continue;
            entry.data_version = version;
            entry.state = entry.run->state;
            out += fmt::format(
                "event: run\ndata: {{\"dir\":{},\"samples\":{},\"state\":\"{}\",\"loading\":{},"
                "\"console_lines\":{},\"console_version\":{}}}\n\n",
                JsonString(entry.run->dir), entry.run->model.stats_records(),
                runview::RunStateName(entry.state), !entry.run->caught_up,
                entry.run->model.console().lines_started(), entry.run->model.console().version());
          }
          if (out.empty()) out = ": keep-alive\n\n";
          return sink.write(out.data(), out.size());
        },
        [](bool) { --open_streams; });
  });

  server.Get(R"(/api/.*)", [](const httplib::Request&, httplib::Response& res) {
    Send(res, ErrorResponse(404, "no such API endpoint"));
  });

  // The dashboard's files: looked up in memory by exact path.
  server.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string path = req.path == "/" ? "/index.html" : req.path;
    for (const Asset& asset : assets_) {
      if (asset.path != path) continue;
      res.set_content(asset.data.data(), asset.data.size(), std::string(asset.content_type).c_str());
      return;
    }
    SendError(res, 404, "no such file");
  });
}

}  // namespace runmon::web
