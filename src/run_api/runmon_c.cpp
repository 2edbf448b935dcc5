// The C interface (include/runmon/runmon.h) over runmon::Run. Nothing escapes it as an exception: start's
// reason goes to a thread-local string runmon_last_error() returns.
#include <runmon/runmon.h>

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <runmon/run.hpp>

struct runmon_run {
  runmon::Run run;
};

namespace {

thread_local std::string last_error;

// The options a caller's struct has (an older, smaller struct leaves the newer fields at their defaults).
runmon::RunOptions ReadOptions(const runmon_run_options* given) {
  runmon_run_options options = RUNMON_RUN_OPTIONS_INIT;
  if (given != nullptr) std::memcpy(&options, given, std::min(given->size, sizeof(options)));
  runmon::RunOptions read;
  if (options.dir != nullptr) read.dir = options.dir;
  if (options.name != nullptr) read.name = options.name;
  if (options.project != nullptr) read.project = options.project;
  if (options.id != nullptr) read.id = options.id;
  if (options.interval != 0.0) read.interval = options.interval;
  return read;
}

// The C arrays as the C++ API's metrics; false when a key is NULL.
bool ReadMetrics(const char* const* keys, const double* values, size_t count,
                 std::vector<runmon::MetricValue>& out) {
  if (count > 0 && (keys == nullptr || values == nullptr)) return false;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr) return false;
    out.emplace_back(keys[i], values[i]);
  }
  return true;
}

}  // namespace

extern "C" {

runmon_run* runmon_run_start(const runmon_run_options* options) {
  last_error.clear();
  try {
    if (options != nullptr && options->size < offsetof(runmon_run_options, dir) + sizeof(options->dir)) {
      last_error = "runmon: runmon_run_options.size is not set (use RUNMON_RUN_OPTIONS_INIT)";
      return nullptr;
    }
    return new runmon_run{runmon::Run::start(ReadOptions(options))};
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "runmon: the run could not be started";
  }
  return nullptr;
}

int runmon_run_log(runmon_run* run, const char* const* keys, const double* values, size_t count,
                   int64_t step) {
  if (run == nullptr) return 0;
  try {
    std::vector<runmon::MetricValue> metrics;
    if (!ReadMetrics(keys, values, count, metrics)) return 0;
    return run->run.log(std::span<const runmon::MetricValue>(metrics),
                        step == RUNMON_NO_STEP ? std::nullopt : std::optional<int64_t>(step))
               ? 1
               : 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
}

int runmon_run_log_json(runmon_run* run, const char* line, size_t length) {
  if (run == nullptr || (line == nullptr && length > 0)) return 0;
  return run->run.log_json(std::string_view(line == nullptr ? "" : line, length)) ? 1 : 0;
}

int runmon_run_summary(runmon_run* run, const char* const* keys, const double* values, size_t count) {
  if (run == nullptr) return 0;
  try {
    std::vector<runmon::MetricValue> metrics;
    if (!ReadMetrics(keys, values, count, metrics)) return 0;
    return run->run.summary(std::span<const runmon::MetricValue>(metrics)) ? 1 : 0;
  } catch (const std::bad_alloc&) {
    return 0;
  }
}

uint64_t runmon_run_dropped(const runmon_run* run) {
  return run == nullptr ? 0 : run->run.dropped();
}

const char* runmon_run_id(const runmon_run* run) {
  return run == nullptr ? "" : run->run.id().c_str();
}

const char* runmon_run_directory(const runmon_run* run) {
  return run == nullptr ? "" : run->run.directory().c_str();
}

int runmon_run_finish(runmon_run* run, int exit_code) {
  if (run == nullptr) return 0;
  const bool complete = run->run.finish(exit_code);
  delete run;
  return complete ? 1 : 0;
}

const char* runmon_last_error(void) {
  return last_error.c_str();
}

}  // extern "C"
