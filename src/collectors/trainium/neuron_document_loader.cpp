// The executable's side of the neuron-monitor module (neuron_document_reader.hpp): loaded once, a reader
// per caller.
#include "collectors/trainium/neuron_document_reader.hpp"

namespace runmon::trainium {

Result<std::unique_ptr<NeuronDocumentReader>> LoadDocumentReader(const std::filesystem::path& directory) {
  auto module = LoadModule<NeuronMonitorModule>(directory);
  if (!module) return Error{module.error()};
  return std::unique_ptr<NeuronDocumentReader>((*module)->make_reader());
}

}  // namespace runmon::trainium
