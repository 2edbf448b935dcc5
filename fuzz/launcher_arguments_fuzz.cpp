// Fuzzes ParseCommandLine (/proc/PID/cmdline) and ParseLauncherArguments (torchrun's flags) on hostile
// command lines: no crash; arguments hold no NUL and are as many as the pieces; what is found comes from an
// argument (whole, or after its '=') and only when torchrun was recognised; and the detection over it keeps
// its checks.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/job_identity.hpp"
#include "fuzz_check.hpp"

namespace {

bool FromAnArgument(const std::vector<std::string>& argv, const std::string& value) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& arg) {
    if (arg == value) return true;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos && arg.substr(eq + 1) == value) return true;
    return arg.size() > 2 && arg.substr(2) == value;  // a short option's attached value
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = runmon::fuzz::AsText(data, size);
  // "torchrun" first, so that the flags after it are read; then as the fuzzer wrote it.
  for (const bool prefixed : {true, false}) {
    const std::string line = prefixed ? std::string("torchrun\0", 9) + std::string(text) : std::string(text);
    const std::vector<std::string> argv = runmon::cluster::ParseCommandLine(line);
    size_t pieces = 0;
    for (size_t start = 0; start < line.size(); ++pieces)
      start = std::min(line.find('\0', start), line.size()) + 1;
    FUZZ_CHECK(argv.size() == pieces);
    for (const auto& arg : argv) FUZZ_CHECK(arg.find('\0') == std::string::npos);

    const auto args = runmon::cluster::ParseLauncherArguments(argv);
    if (prefixed) FUZZ_CHECK(args.torchrun);
    if (args.node_rank) FUZZ_CHECK(args.torchrun && FromAnArgument(argv, *args.node_rank));
    if (args.rdzv_id) FUZZ_CHECK(args.torchrun && FromAnArgument(argv, *args.rdzv_id));

    runmon::cluster::JobIdentityInputs inputs;
    inputs.argv = argv;
    inputs.environment = {{"RANK", "1"}};
    const auto detected = runmon::cluster::DetectJobIdentity(inputs, {});
    if (!detected.job.node_rank.empty())
      FUZZ_CHECK(runmon::cluster::ValidateRank(detected.job.node_rank).ok());
    if (!detected.job.job_id.empty()) FUZZ_CHECK(detected.job.launcher == "torchelastic");
    FUZZ_CHECK(args.torchrun == detected.job.rank.empty());  // a wrapper is no rank of its own
  }
  return 0;
}
