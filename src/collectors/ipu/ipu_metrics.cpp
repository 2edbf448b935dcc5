// The ipu family's table, joined into the catalog (core/catalog.hpp), and the keys of a device's fields.
#include "collectors/ipu/ipu_metrics.hpp"

#include <span>

#include <fmt/format.h>

#include "core/catalog.hpp"

namespace runmon {
namespace metric_families {

std::span<const MetricDescriptor> ipu() {
  using namespace ipu_metrics;
  static constexpr MetricDescriptor kTable[] = {kBoardTemp, kDieTemp,     kClock,
                                                kPower,     kUtilisation, kSessionUtilisation,
                                                kLinkSpeed, kBoardPower,  kLinkCorrectableErrors};
  return kTable;
}

}  // namespace metric_families

namespace ipu_metrics {
namespace {

constexpr std::string_view kDevicePrefix = "ipu.{id}.";

}  // namespace

const MetricDescriptor* FieldDescriptor(std::string_view field) {
  for (const MetricDescriptor& descriptor : metric_families::ipu()) {
    const std::string_view pattern = descriptor.pattern;
    if (pattern.size() == kDevicePrefix.size() + field.size() && pattern.starts_with(kDevicePrefix) &&
        pattern.ends_with(field)) {
      return &descriptor;
    }
  }
  return nullptr;
}

std::string FieldKey(std::string_view id, std::string_view field) {
  if (const MetricDescriptor* descriptor = FieldDescriptor(field)) return MetricKey(*descriptor, id);
  return fmt::format("ipu.{}.{}", id, field);
}

}  // namespace ipu_metrics
}  // namespace runmon
