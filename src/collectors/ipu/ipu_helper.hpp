// The Python helper through which runmon reads gcipuinfo, Graphcore's Python module (W&B's data path,
// metrics.md B §6): its source ships inside runmon and is run as `python3 -c <source>`, so there is nothing
// to install and nothing on disk to go stale. Protocol, one JSON object per line on stdout (flushed each):
//   - at start it imports gcipuinfo; when that fails it prints {"error": "No module named 'gcipuinfo'",
//     "missing_module": true} and exits with status 3;
//   - it creates gcipuinfo.gcipuinfo() and calls setUpdateMode(True) (a failure: {"error": ...}, status 4),
//     then prints {"ready": true};
//   - for every line it reads on stdin (a request number) it prints one line: {"request": "<the line>",
//     "devices": [{field: value, ...}, ...]} from getDevices(), every name and value through str(), or
//     {"request": "<the line>", "error": "<exception>"} when getDevices raised;
//   - it exits at the end of stdin.
// Starting python3 and importing json costs about 20-30 ms of CPU once per run (docs/ipu.md).
#pragma once

#include <string_view>

namespace runmon::ipu {

// The helper's exit status when gcipuinfo cannot be imported.
inline constexpr int kMissingModuleExitStatus = 3;

// The helper's Python source, for `python3 -c`.
std::string_view HelperSource();

}  // namespace runmon::ipu
