// The neuron-monitor module's side (neuron_document_reader.hpp): a reader over the simdjson parser and the
// module's entry. Linked into runmon-modules/neuron-monitor.so, and into tests as it is.
#include "collectors/trainium/neuron_document_reader.hpp"

namespace runmon::trainium {
namespace {

class LinkedReader : public NeuronDocumentReader {
 public:
  Result<NeuronDocument> Read(std::string_view line) override { return parser_.Parse(line); }

 private:
  NeuronDocumentParser parser_;
};

}  // namespace

NeuronDocumentReader* MakeReader() {
  return new LinkedReader();
}

std::unique_ptr<NeuronDocumentReader> MakeLinkedDocumentReader() {
  return std::make_unique<LinkedReader>();
}

}  // namespace runmon::trainium

extern "C" const void* runmon_neuron_monitor_module() {
  using runmon::trainium::NeuronMonitorModule;
  static const NeuronMonitorModule table{
      .header = {.abi = NeuronMonitorModule::kModuleAbi, .table_size = sizeof(NeuronMonitorModule)},
      .make_reader = &runmon::trainium::MakeReader};
  return &table;
}
