// What the dashboard's fuzz targets share: the RunStore over a logdir the target writes once (in the
// system's temporary directory, removed at exit, the store started and kept for the whole fuzzing process),
// the check every API answer meets (200, 400 or 404, JSON, an error with a message), and the fuzzer's bytes
// as query parameters.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "web/api.hpp"
#include "web/run_store.hpp"

namespace runmon::fuzz {

// `write(logdir)` fills the logdir once, on the first call; later calls return the same started store.
template <typename WriteLogdir>
web::RunStore& StartedRunStore(const std::string& name, WriteLogdir write) {
  static web::RunStore* store = [&] {
    static const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    write(dir);
    static web::RunStore* started = new web::RunStore(dir);  // lives for the whole fuzzing process
    started->Start();
    std::atexit([] {
      started->Stop();
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    });
    return started;
  }();
  return *store;
}

// `text` split at '&' and '=' into parameters: any bytes, repeated names, no value.
inline web::QueryParams QueryFromBytes(std::string_view text) {
  web::QueryParams params;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t amp = std::min(text.find('&', start), text.size());
    const std::string_view part = text.substr(start, amp - start);
    const size_t equals = part.find('=');
    params.emplace(std::string(part.substr(0, equals)),
                   equals == std::string_view::npos ? std::string() : std::string(part.substr(equals + 1)));
    start = amp + 1;
  }
  return params;
}

inline nlohmann::json CheckApiJson(const web::ApiResponse& response) {
  FUZZ_CHECK(response.status == 200 || response.status == 400 || response.status == 404);
  auto parsed = nlohmann::json::parse(response.body, nullptr, false);
  FUZZ_CHECK(!parsed.is_discarded());
  if (response.status != 200) FUZZ_CHECK(parsed.contains("error"));
  return parsed;
}

}  // namespace runmon::fuzz
