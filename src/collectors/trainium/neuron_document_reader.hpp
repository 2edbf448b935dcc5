// What the Trainium collector parses neuron-monitor's lines with. The parser is simdjson's (see
// neuron_monitor_parse.hpp), and libsimdjson brings the shared libstdc++ with it: linked into runmon it would
// be mapped by every `runmon run` and `runmon sample` on every machine, Trainium or not (about 2 MB
// resident). So the parser is the module runmon-modules/neuron-monitor.so (modules/module_loader.hpp), loaded
// when the family starts because a neuron-monitor is there; the collector reaches it through this interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "collectors/trainium/neuron_monitor_parse.hpp"
#include "core/result.hpp"
#include "modules/module_loader.hpp"

namespace runmon::trainium {

class NeuronDocumentReader {
 public:
  virtual ~NeuronDocumentReader() = default;
  // One line of neuron-monitor's output (NeuronDocumentParser::Parse). One thread at a time.
  virtual Result<NeuronDocument> Read(std::string_view line) = 0;
};

struct NeuronMonitorModule {
  static constexpr std::string_view kModuleName = "neuron-monitor";
  static constexpr const char* kModuleEntry = "runmon_neuron_monitor_module";
  static constexpr std::uint32_t kModuleAbi = 1;
  ModuleHeader header;
  // A new reader, owned by the caller.
  NeuronDocumentReader* (*make_reader)();
};

// The module's make_reader.
NeuronDocumentReader* MakeReader();

// A reader over the parser linked into the caller (the module, tests, the fuzzer, the bench).
std::unique_ptr<NeuronDocumentReader> MakeLinkedDocumentReader();

// In the executable: the module loaded from `directory`, a reader made; errors name the module's file.
Result<std::unique_ptr<NeuronDocumentReader>> LoadDocumentReader(
    const std::filesystem::path& directory = ModuleDirectory());

}  // namespace runmon::trainium
