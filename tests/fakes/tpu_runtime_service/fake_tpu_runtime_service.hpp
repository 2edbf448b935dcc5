// A fake of libtpu's runtime-metrics service for the TPU tests: a gRPC server on 127.0.0.1 that answers
// GetRuntimeMetric from a table metric_name -> MetricResponse and ListSupportedMetrics with the table's
// names, in their order. The table comes from JSON in proto3 JSON mapping (tests/fixtures/tpu/*.json), either
// a file's top level or one case of a file whose cases each hold "responses"; a file is read again when its
// modification time changes, so a test can change values while a client reads them. Faults, for the
// client's timeouts and errors: a delay on every call, metrics that answer NOT_FOUND though listed, every
// call UNAVAILABLE, and a plain TCP listener that accepts connections and never answers (StalledListener).
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "tpu/tpu_runtime_metrics.pb.h"

namespace runmon::tpu::fake {

using MetricResponse = ::tpu::monitoring::runtime::MetricResponse;
using ResponseTable = std::vector<std::pair<std::string, MetricResponse>>;

// The responses of `file`: the case `case_name` ("responses" of that member), or, without a case, the
// file's own "responses" member or else its top level. Members whose name starts with '_' are comments.
Result<ResponseTable> ReadResponseTable(const std::filesystem::path& file, const std::string& case_name = "");

// The names of a file's cases (its members with a "responses" object), in the file's order.
Result<std::vector<std::string>> ReadCaseNames(const std::filesystem::path& file);

struct FakeServiceOptions {
  std::filesystem::path responses_file;  // when set, the table (re-read when its mtime changes)
  std::string case_name;                 // a case of responses_file
  ResponseTable responses;               // the table when there is no responses_file
  int port = 0;                          // 0: a free port
  int delay_ms = 0;                      // before every answer
  std::set<std::string> not_found;       // answer NOT_FOUND though listed
  bool unavailable = false;              // every call UNAVAILABLE
};

class FakeTpuRuntimeService {
 public:
  static Result<std::unique_ptr<FakeTpuRuntimeService>> Start(FakeServiceOptions options);
  ~FakeTpuRuntimeService();  // stops the server; delayed calls end at once
  FakeTpuRuntimeService(const FakeTpuRuntimeService&) = delete;
  FakeTpuRuntimeService& operator=(const FakeTpuRuntimeService&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Every GetRuntimeMetric request so far: (metric_name, skip_node_aggregation).
  std::vector<std::pair<std::string, bool>> requests() const;

  class Implementation;

 private:
  FakeTpuRuntimeService() = default;

  std::unique_ptr<Implementation> implementation_;
  int port_ = 0;
};

// A TCP listener on 127.0.0.1 that accepts every connection and never reads, writes or closes one until it
// is destroyed: a service that hangs.
class StalledListener {
 public:
  static Result<std::unique_ptr<StalledListener>> Start(int port = 0);
  ~StalledListener();
  StalledListener(const StalledListener&) = delete;
  StalledListener& operator=(const StalledListener&) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  class Implementation;

 private:
  StalledListener() = default;

  std::unique_ptr<Implementation> implementation_;
  int port_ = 0;
};

}  // namespace runmon::tpu::fake
