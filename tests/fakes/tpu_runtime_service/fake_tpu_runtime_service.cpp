// The fake runtime-metrics service (fake_tpu_runtime_service.hpp): a synchronous gRPC server whose handlers
// read the table under a lock (refreshed from the file first when it changed), and a stalled listener.
#include "fake_tpu_runtime_service.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "tpu/tpu_runtime_metrics.grpc.pb.h"

namespace runmon::tpu::fake {
namespace {

namespace proto = ::tpu::monitoring::runtime;
using Json = nlohmann::ordered_json;

Result<Json> ReadJson(const std::filesystem::path& file) {
  std::ifstream stream(file);
  if (!stream) return Error{fmt::format("{}: cannot be read", file.string())};
  std::stringstream text;
  text << stream.rdbuf();
  Json root = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return Error{fmt::format("{}: not a JSON object", file.string())};
  return root;
}

Result<ResponseTable> TableOf(const Json& responses, const std::string& where) {
  ResponseTable table;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  for (const auto& [name, value] : responses.items()) {
    if (name.starts_with('_')) continue;
    if (!value.is_object()) return Error{fmt::format("{}: {} is not a MetricResponse object", where, name)};
    MetricResponse response;
    const auto status = google::protobuf::util::JsonStringToMessage(value.dump(), &response, options);
    if (!status.ok()) return Error{fmt::format("{}: {}: {}", where, name, status.ToString())};
    table.emplace_back(name, std::move(response));
  }
  return table;
}

}  // namespace

Result<ResponseTable> ReadResponseTable(const std::filesystem::path& file, const std::string& case_name) {
  auto root = ReadJson(file);
  if (!root) return Error{root.error()};
  if (!case_name.empty()) {
    const auto found = root->find(case_name);
    if (found == root->end() || !found->is_object() || !found->contains("responses")) {
      return Error{fmt::format("{}: no case {} with responses", file.string(), case_name)};
    }
    return TableOf((*found)["responses"], file.string() + ": " + case_name);
  }
  if (root->contains("responses")) return TableOf((*root)["responses"], file.string());
  return TableOf(*root, file.string());
}

Result<std::vector<std::string>> ReadCaseNames(const std::filesystem::path& file) {
  auto root = ReadJson(file);
  if (!root) return Error{root.error()};
  std::vector<std::string> names;
  for (const auto& [name, value] : root->items()) {
    if (value.is_object() && value.contains("responses")) names.push_back(name);
  }
  return names;
}

class FakeTpuRuntimeService::Implementation final : public proto::RuntimeMetricService::Service {
 public:
  explicit Implementation(FakeServiceOptions options) : options_(std::move(options)) {}

  Status Load() {
    if (options_.responses_file.empty()) {
      table_ = options_.responses;
      return OkStatus();
    }
    std::error_code error;
    loaded_time_ = std::filesystem::last_write_time(options_.responses_file, error);
    auto table = ReadResponseTable(options_.responses_file, options_.case_name);
    if (!table) return Error{table.error()};
    table_ = std::move(*table);
    return OkStatus();
  }

  grpc::Status GetRuntimeMetric(grpc::ServerContext*, const proto::MetricRequest* request,
                                proto::MetricResponse* response) override {
    std::unique_lock lock(mutex_);
    requests_.emplace_back(request->metric_name(), request->skip_node_aggregation());
    if (auto failed = Answerable(lock)) return *failed;
    if (options_.not_found.contains(request->metric_name())) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "the fake lists it but does not know it");
    }
    for (const auto& [name, answer] : table_) {
      if (name == request->metric_name()) {
        *response = answer;
        return grpc::Status::OK;
      }
    }
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such metric: " + request->metric_name());
  }

  grpc::Status ListSupportedMetrics(grpc::ServerContext*, const proto::ListSupportedMetricsRequest*,
                                    proto::ListSupportedMetricsResponse* response) override {
    std::unique_lock lock(mutex_);
    if (auto failed = Answerable(lock)) return *failed;
    for (const auto& entry : table_) response->add_supported_metric()->set_metric_name(entry.first);
    return grpc::Status::OK;
  }

  void Stop() {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stopped_.notify_all();
  }

  std::vector<std::pair<std::string, bool>> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  // The delay, then the UNAVAILABLE fault; the table read again when its file changed.
  std::optional<grpc::Status> Answerable(std::unique_lock<std::mutex>& lock) {
    if (options_.delay_ms > 0) {
      stopped_.wait_for(lock, std::chrono::milliseconds(options_.delay_ms), [this] { return stopping_; });
    }
    if (stopping_ || options_.unavailable)
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the fake is unavailable");
    Refresh();
    return std::nullopt;
  }

  void Refresh() {
    if (options_.responses_file.empty()) return;
    std::error_code error;
    const auto time = std::filesystem::last_write_time(options_.responses_file, error);
    if (error || time == loaded_time_) return;
    // A file caught half-written is read again at the next call.
    auto table = ReadResponseTable(options_.responses_file, options_.case_name);
    if (!table) return;
    table_ = std::move(*table);
    loaded_time_ = time;
  }

  friend class FakeTpuRuntimeService;  // starts and stops server_

  FakeServiceOptions options_;
  std::unique_ptr<grpc::Server> server_;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;  // wakes delayed calls when the service stops
  bool stopping_ = false;
  ResponseTable table_;
  std::filesystem::file_time_type loaded_time_;
  std::vector<std::pair<std::string, bool>> requests_;
};

Result<std::unique_ptr<FakeTpuRuntimeService>> FakeTpuRuntimeService::Start(FakeServiceOptions options) {
  const int requested_port = options.port;
  auto implementation = std::make_unique<Implementation>(std::move(options));
  if (auto loaded = implementation->Load(); !loaded) return Error{loaded.error()};
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(fmt::format("127.0.0.1:{}", requested_port), grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(implementation.get());
  implementation->server_ = builder.BuildAndStart();
  if (!implementation->server_ || port == 0) {
    return Error{fmt::format("the fake service cannot listen on 127.0.0.1:{}", requested_port)};
  }
  std::unique_ptr<FakeTpuRuntimeService> service(new FakeTpuRuntimeService());
  service->implementation_ = std::move(implementation);
  service->port_ = port;
  return service;
}

FakeTpuRuntimeService::~FakeTpuRuntimeService() {
  implementation_->Stop();
  implementation_->server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  implementation_->server_->Wait();
}

std::vector<std::pair<std::string, bool>> FakeTpuRuntimeService::requests() const {
  return implementation_->requests();
}

class StalledListener::Implementation {
 public:
  Implementation(int listener, int wake) : listener_(listener), wake_(wake), thread_([this] { Accept(); }) {}
  ~Implementation() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof(one));
    thread_.join();
    for (int connection : connections_) ::close(connection);
    ::close(listener_);
    ::close(wake_);
  }
  Implementation(const Implementation&) = delete;
  Implementation& operator=(const Implementation&) = delete;

 private:
  void Accept() {
    pollfd watched[2] = {{.fd = listener_, .events = POLLIN, .revents = 0},
                         {.fd = wake_, .events = POLLIN, .revents = 0}};
    while (::poll(watched, 2, -1) >= 0 && watched[1].revents == 0) {
      if (watched[0].revents & POLLIN) {
        const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (connection >= 0) connections_.push_back(connection);
      }
    }
  }

  int listener_;
  int wake_;
  std::vector<int> connections_;  // the accepting thread's until it is joined
  std::thread thread_;
};

Result<std::unique_ptr<StalledListener>> StalledListener::Start(int port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Error{"socket failed"};
  const int yes = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listener, 64) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(listener);
    return Error{fmt::format("the stalled listener cannot listen on 127.0.0.1:{}", port)};
  }
  const int wake = ::eventfd(0, EFD_CLOEXEC);
  if (wake < 0) {
    ::close(listener);
    return Error{"eventfd failed"};
  }
  std::unique_ptr<StalledListener> stalled(new StalledListener());
  stalled->implementation_ = std::make_unique<Implementation>(listener, wake);
  stalled->port_ = ntohs(address.sin_port);
  return stalled;
}

StalledListener::~StalledListener() = default;

}  // namespace runmon::tpu::fake
