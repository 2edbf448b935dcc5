// A module's calls into the executable, for the check that module_exports.cmake refuses an interface that
// passes a C++ runtime's stream (see there). Built twice: with MODULE_PASSES_STREAM, the module calls a
// runmon function taking std::ostream&; without, one taking only a string_view.
#include <ostream>
#include <string_view>

namespace runmon::module_interface_check {
#ifdef MODULE_PASSES_STREAM
void Describe(std::ostream& out);
#else
void Describe(std::string_view text);
#endif
}  // namespace runmon::module_interface_check

extern "C" void runmon_module_interface_check_entry(void* out) {
#ifdef MODULE_PASSES_STREAM
  runmon::module_interface_check::Describe(*static_cast<std::ostream*>(out));
#else
  runmon::module_interface_check::Describe(static_cast<const char*>(out));
#endif
}
