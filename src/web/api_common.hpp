// What the JSON API's handlers share (api.cpp for runs and charts, jobs.cpp for jobs): reading query
// parameters (a malformed or out-of-range value is an error naming the parameter, never a guess), numbers
// written in their shortest JSON form (non-finite ones as null), a run's display name, and the "404:" /
// "503:" prefixes by which a helper's error message picks its status.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "runview/run_model.hpp"
#include "web/api.hpp"

namespace runmon::web {

std::optional<std::string> Param(const QueryParams& params, const std::string& name);
// An integer parameter from `min` to `max`, or `fallback` when absent.
Result<long long> IntParam(const QueryParams& params, const std::string& name, long long fallback,
                           long long min, long long max);
// A finite number, or nullopt when absent.
Result<std::optional<double>> NumberParam(const QueryParams& params, const std::string& name);
// The non-empty parts of a comma-separated list.
std::vector<std::string> SplitList(std::string_view text);

// A float or double as the shortest JSON number that reads back as it; null when not finite.
void AppendNumber(std::string& out, double value);
void AppendNumber(std::string& out, float value);
// A JSON array of the values as floats (chart precision), null where a value is missing.
void AppendValues(std::string& out, const std::vector<std::optional<double>>& values);

// A run's name in lists and labels: its name (shortened), else its id, else its directory.
std::string DisplayName(const runview::RunOverview& overview, std::string_view dir);

// An error message to a response: "404:..." and "503:..." give those statuses, anything else 400.
ApiResponse FromError(const std::string& message);

}  // namespace runmon::web
