// libtpu's monitoring SDK table as runmon knows it (metrics.md B §7.2, accelerators.md §1.7): the header
// words, the byte offset of every slot runmon calls (verified by W&B against libtpu 0.0.37-0.0.39) and the
// argument struct each slot takes. Undocumented ABI, written down once: the loader (libtpu_sdk.cpp) reads a
// table through it and the test's fake libtpu.so (tests/fakes/libtpu) builds one with it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace runmon::tpu::sdk_abi {

// Every slot takes one pointer to its arguments and returns an error handle (null: success).
using SlotFunction = void* (*)(void* args);

struct Slot {
  const char* name;
  std::size_t offset;
};
inline constexpr Slot kErrorMessage{"ErrorMessage", 0x08};
inline constexpr Slot kDestroyError{"DestroyError", 0x10};
inline constexpr Slot kCreateClient{"CreateClient", 0x20};
inline constexpr Slot kDestroyClient{"DestroyClient", 0x28};
inline constexpr Slot kGetMetric{"GetMetric", 0x50};
inline constexpr Slot kGetMetricDescription{"GetMetricDescription", 0x58};
inline constexpr Slot kGetMetricValues{"GetMetricValues", 0x60};
inline constexpr std::array kSlots{kErrorMessage, kDestroyError,         kCreateClient,   kDestroyClient,
                                   kGetMetric,    kGetMetricDescription, kGetMetricValues};

// The table starts with these two 32-bit words.
inline constexpr std::uint32_t kHeaderWord0 = 0;
inline constexpr std::uint32_t kHeaderWord1 = 1;

struct ErrorMessageArgs {
  void* error;
  const char* message;
  std::size_t message_len;
};
struct DestroyErrorArgs {
  void* error;
};
struct CreateClientArgs {
  void* client;
};
struct DestroyClientArgs {
  void* client;
};
struct GetMetricArgs {
  void* client;
  const char* metric_name;
  void* metric;
};
struct GetMetricDescriptionArgs {
  void* metric;
  const char* description;
  std::size_t description_len;
};
struct GetMetricValuesArgs {
  void* metric;
  const char* const* values;
  std::size_t value_count;
};

}  // namespace runmon::tpu::sdk_abi
