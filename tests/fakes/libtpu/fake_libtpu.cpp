// A fake libtpu.so for the test suite: it exports GetLibtpuSdkApi@@VERS_1.0 (fake_libtpu.map), which returns
// a table laid out as libtpu's monitoring SDK table is (metrics.md B §7.2: header words 0 and 1, then
// function pointers at the offsets of src/collectors/tpu/libtpu_sdk_abi.hpp, which runmon reads the table
// with), and answers from the JSON scenario named by
// RUNMON_FAKE_LIBTPU_SCENARIO (README.md), read again at every GetLibtpuSdkApi call so one test process can
// run several scenarios. Each call gets a table of its own, kept for the process's life as libtpu's is, so a
// table handed out earlier never changes; a client answers from the scenario of its CreateClient. The slots
// libtpu has at the other offsets answer with an error and are counted, so a test sees a caller that calls
// a wrong slot. The scenario can break everything a caller must check: the table (null, its header, any
// slot null, misaligned), the client (an error, a null client) and what GetMetric's slots write (counts and
// lengths over the caps, null pointers with a length, a null entry, a string without a NUL within 64 KiB).
// Test hooks: fake_libtpu_counters (fake_libtpu_counters.h). Built a second time with
// FAKE_LIBTPU_LATER_DEFAULT_VERSION, the entry is GetLibtpuSdkApi@VERS_1.0 beside a default
// GetLibtpuSdkApi@@VERS_2.0 without a table, as a later libtpu could have it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collectors/tpu/libtpu_sdk_abi.hpp"
#include "fake_libtpu_counters.h"

#define FAKE_LIBTPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Json = nlohmann::json;
using namespace runmon::tpu::sdk_abi;

constexpr std::size_t kTableBytes = 0x68;
constexpr std::size_t kFirstSlot = kErrorMessage.offset;
constexpr std::size_t kUnterminatedValueBytes = 70 * 1024;

struct MetricScript {
  std::string description;
  std::vector<std::string> values;
  std::optional<std::string> error;              // GetMetric fails
  std::optional<std::string> description_error;  // GetMetricDescription fails
  std::optional<std::string> values_error;       // GetMetricValues fails
};

struct Scenario {
  std::array<std::uint32_t, 2> header{kHeaderWord0, kHeaderWord1};
  std::optional<std::size_t> null_slot_offset;
  bool null_api = false;
  bool unaligned_table = false;
  std::optional<std::string> create_client_error;
  bool null_client = false;
  std::optional<std::size_t> value_count;
  std::optional<std::size_t> description_len;
  bool null_values_with_count = false;
  std::optional<std::size_t> null_entry_at;
  bool unterminated_value = false;
  std::map<std::string, MetricScript> metrics;
};

// A GetMetric handle: what its two slots hand out, owned by its client.
struct Metric {
  std::string description;
  std::vector<std::string> strings;
  std::vector<const char*> entries;
  const char* const* values = nullptr;
  std::size_t value_count = 0;
  std::optional<std::string> description_error;
  std::optional<std::string> values_error;
};

struct Client {
  std::shared_ptr<const Scenario> scenario;
  std::vector<std::unique_ptr<Metric>> metrics;
};

struct FakeError {
  std::string message;
};

struct State {
  std::mutex mutex;
  FakeLibtpuCounters counters{};
  std::shared_ptr<const Scenario> scenario = std::make_shared<Scenario>();
  std::deque<std::vector<unsigned char>> tables;
  std::map<const Client*, std::unique_ptr<Client>> clients;
  std::set<const Metric*> metrics;
  std::map<const FakeError*, std::unique_ptr<FakeError>> errors;
};

State& TheState() {
  static State state;
  return state;
}

const std::map<std::string, std::size_t>& SlotOffsets() {
  static const std::map<std::string, std::size_t> offsets = [] {
    std::map<std::string, std::size_t> by_name;
    for (const Slot& slot : kSlots) by_name[slot.name] = slot.offset;
    return by_name;
  }();
  return offsets;
}

std::size_t Count(const Json& value, const char* key) {
  if (!value.is_number_unsigned()) throw std::runtime_error(std::string(key) + " must be a count");
  return value.get<std::size_t>();
}

// "ff41" as the bytes 0xff 0x41: values that JSON text cannot carry (invalid UTF-8).
std::string FromHex(const std::string& hex) {
  if (hex.size() % 2 != 0) throw std::runtime_error("values_hex: an odd number of digits");
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

MetricScript ParseMetric(const std::string& name, const Json& object) {
  MetricScript script;
  for (const auto& [key, value] : object.items()) {
    if (key == "description") {
      script.description = value.get<std::string>();
    } else if (key == "values") {
      script.values = value.get<std::vector<std::string>>();
    } else if (key == "values_hex") {
      for (const auto& hex : value) script.values.push_back(FromHex(hex.get<std::string>()));
    } else if (key == "error") {
      script.error = value.get<std::string>();
    } else if (key == "description_error") {
      script.description_error = value.get<std::string>();
    } else if (key == "values_error") {
      script.values_error = value.get<std::string>();
    } else {
      throw std::runtime_error("metric " + name + ": unknown key " + key);
    }
  }
  return script;
}

Scenario ParseScenario(const Json& document) {
  if (!document.is_object()) throw std::runtime_error("the scenario must be an object");
  Scenario scenario;
  for (const auto& [key, value] : document.items()) {
    if (key.starts_with("_")) continue;  // a comment
    if (key == "header") {
      const auto words = value.get<std::vector<std::uint32_t>>();
      if (words.size() != 2) throw std::runtime_error("header must be two words");
      scenario.header = {words[0], words[1]};
    } else if (key == "null_slot") {
      const auto slot = SlotOffsets().find(value.get<std::string>());
      if (slot == SlotOffsets().end()) throw std::runtime_error("null_slot names no slot");
      scenario.null_slot_offset = slot->second;
    } else if (key == "null_api") {
      scenario.null_api = value.get<bool>();
    } else if (key == "unaligned_table") {
      scenario.unaligned_table = value.get<bool>();
    } else if (key == "create_client_error") {
      scenario.create_client_error = value.get<std::string>();
    } else if (key == "null_client") {
      scenario.null_client = value.get<bool>();
    } else if (key == "value_count") {
      scenario.value_count = Count(value, "value_count");
    } else if (key == "description_len") {
      scenario.description_len = Count(value, "description_len");
    } else if (key == "null_values_with_count") {
      scenario.null_values_with_count = value.get<bool>();
    } else if (key == "null_entry_at") {
      scenario.null_entry_at = Count(value, "null_entry_at");
    } else if (key == "unterminated_value") {
      scenario.unterminated_value = value.get<bool>();
    } else if (value.is_object()) {
      scenario.metrics.emplace(key, ParseMetric(key, value));
    } else {
      throw std::runtime_error("unknown switch " + key);
    }
  }
  return scenario;
}

// The scenario file's content, or nullptr (with the reason on stderr).
std::shared_ptr<const Scenario> ReadScenario() {
  const char* path = std::getenv("RUNMON_FAKE_LIBTPU_SCENARIO");
  if (path == nullptr) {
    std::fprintf(stderr, "fake libtpu: RUNMON_FAKE_LIBTPU_SCENARIO is not set\n");
    return nullptr;
  }
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "fake libtpu: cannot read %s\n", path);
    return nullptr;
  }
  try {
    return std::make_shared<const Scenario>(ParseScenario(Json::parse(in)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake libtpu: bad scenario %s: %s\n", path, e.what());
    return nullptr;
  }
}

// Called with the state locked.
void* NewError(State& state, std::string message) {
  auto error = std::make_unique<FakeError>(FakeError{std::move(message)});
  FakeError* handle = error.get();
  state.errors.emplace(handle, std::move(error));
  ++state.counters.errors_created;
  return handle;
}

Client* LiveClient(State& state, void* handle) {
  const auto client = state.clients.find(static_cast<const Client*>(handle));
  if (client == state.clients.end()) {
    ++state.counters.bad_handles;
    return nullptr;
  }
  return client->second.get();
}

Metric* LiveMetric(State& state, void* handle) {
  if (!state.metrics.contains(static_cast<const Metric*>(handle))) {
    ++state.counters.bad_handles;
    return nullptr;
  }
  return static_cast<Metric*>(handle);
}

std::unique_ptr<Metric> MakeMetric(const Scenario& scenario, const MetricScript& script) {
  auto metric = std::make_unique<Metric>();
  metric->description_error = script.description_error;
  metric->values_error = script.values_error;
  metric->description =
      scenario.description_len ? std::string(*scenario.description_len, 'd') : script.description;
  // Every string is in place before any entry points into one.
  metric->strings = script.values;
  if (metric->strings.empty()) metric->strings.emplace_back("0");
  const std::size_t scripted = metric->strings.size();
  // Its NUL lies beyond the 64 KiB a caller may read: the caller must stop before it.
  if (scenario.unterminated_value) metric->strings.emplace_back(kUnterminatedValueBytes, 'u');
  const std::size_t count = scenario.value_count.value_or(script.values.size());
  for (std::size_t i = 0; i < count; ++i) metric->entries.push_back(metric->strings[i % scripted].c_str());
  if (scenario.unterminated_value) metric->entries.push_back(metric->strings.back().c_str());
  if (scenario.null_entry_at && *scenario.null_entry_at < metric->entries.size()) {
    metric->entries[*scenario.null_entry_at] = nullptr;
  }
  metric->value_count = metric->entries.size();
  metric->values = metric->entries.empty() ? nullptr : metric->entries.data();
  if (scenario.null_values_with_count) {
    metric->values = nullptr;
    if (metric->value_count == 0) metric->value_count = 1;
  }
  return metric;
}

void* ErrorMessage(void* raw) {
  auto* args = static_cast<ErrorMessageArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  args->message = nullptr;
  args->message_len = 0;
  const auto error = state.errors.find(static_cast<const FakeError*>(args->error));
  if (error == state.errors.end()) {
    ++state.counters.bad_handles;
    return nullptr;
  }
  args->message = error->second->message.data();
  args->message_len = error->second->message.size();
  return nullptr;
}

void* DestroyError(void* raw) {
  auto* args = static_cast<DestroyErrorArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  if (state.errors.erase(static_cast<const FakeError*>(args->error)) == 0) {
    ++state.counters.bad_handles;
    return nullptr;
  }
  ++state.counters.errors_destroyed;
  return nullptr;
}

void* CreateClient(void* raw) {
  auto* args = static_cast<CreateClientArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  args->client = nullptr;
  if (state.scenario->create_client_error) return NewError(state, *state.scenario->create_client_error);
  if (state.scenario->null_client) return nullptr;
  auto client = std::make_unique<Client>();
  client->scenario = state.scenario;
  args->client = client.get();
  state.clients.emplace(client.get(), std::move(client));
  ++state.counters.clients_created;
  return nullptr;
}

void* DestroyClient(void* raw) {
  auto* args = static_cast<DestroyClientArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  Client* client = LiveClient(state, args->client);
  if (client == nullptr) return NewError(state, "DestroyClient: not a live client");
  for (const auto& metric : client->metrics) state.metrics.erase(metric.get());
  state.clients.erase(client);
  ++state.counters.clients_destroyed;
  return nullptr;
}

void* GetMetric(void* raw) {
  auto* args = static_cast<GetMetricArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  args->metric = nullptr;
  Client* client = LiveClient(state, args->client);
  if (client == nullptr) return NewError(state, "GetMetric: not a live client");
  const std::string name = args->metric_name != nullptr ? args->metric_name : "";
  const auto script = client->scenario->metrics.find(name);
  if (script == client->scenario->metrics.end()) return NewError(state, "NOT_FOUND: no metric " + name);
  if (script->second.error) return NewError(state, *script->second.error);
  client->metrics.push_back(MakeMetric(*client->scenario, script->second));
  args->metric = client->metrics.back().get();
  state.metrics.insert(client->metrics.back().get());
  return nullptr;
}

void* GetMetricDescription(void* raw) {
  auto* args = static_cast<GetMetricDescriptionArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  args->description = nullptr;
  args->description_len = 0;
  Metric* metric = LiveMetric(state, args->metric);
  if (metric == nullptr) return NewError(state, "GetMetricDescription: not a live metric");
  if (metric->description_error) return NewError(state, *metric->description_error);
  args->description = metric->description.data();
  args->description_len = metric->description.size();
  return nullptr;
}

void* GetMetricValues(void* raw) {
  auto* args = static_cast<GetMetricValuesArgs*>(raw);
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  args->values = nullptr;
  args->value_count = 0;
  Metric* metric = LiveMetric(state, args->metric);
  if (metric == nullptr) return NewError(state, "GetMetricValues: not a live metric");
  if (metric->values_error) return NewError(state, *metric->values_error);
  args->values = metric->values;
  args->value_count = metric->value_count;
  return nullptr;
}

// libtpu's slots at the offsets runmon does not use.
void* UnexpectedSlot(void*) {
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.slot_calls;
  ++state.counters.unexpected_slot_calls;
  return NewError(state, "the fake libtpu has no slot here");
}

SlotFunction ImplementedSlot(std::size_t offset) {
  const std::pair<Slot, SlotFunction> implemented[] = {{kErrorMessage, ErrorMessage},
                                                       {kDestroyError, DestroyError},
                                                       {kCreateClient, CreateClient},
                                                       {kDestroyClient, DestroyClient},
                                                       {kGetMetric, GetMetric},
                                                       {kGetMetricDescription, GetMetricDescription},
                                                       {kGetMetricValues, GetMetricValues}};
  for (const auto& [slot, function] : implemented) {
    if (slot.offset == offset) return function;
  }
  return UnexpectedSlot;
}

// A new table for `scenario`, kept for the process's life.
const unsigned char* MakeTable(State& state, const Scenario& scenario) {
  std::vector<unsigned char>& storage = state.tables.emplace_back(kTableBytes + 1, 0);
  unsigned char* table = storage.data() + (scenario.unaligned_table ? 1 : 0);
  std::memcpy(table, &scenario.header[0], sizeof scenario.header[0]);
  std::memcpy(table + 4, &scenario.header[1], sizeof scenario.header[1]);
  for (std::size_t offset = kFirstSlot; offset < kTableBytes; offset += sizeof(SlotFunction)) {
    SlotFunction slot = offset == scenario.null_slot_offset ? nullptr : ImplementedSlot(offset);
    std::memcpy(table + offset, &slot, sizeof slot);
  }
  return table;
}

}  // namespace

namespace {

// The table for the scenario as the file has it now.
const void* CurrentTable() {
  std::shared_ptr<const Scenario> scenario = ReadScenario();
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.api_calls;
  if (scenario == nullptr || scenario->null_api) return nullptr;
  state.scenario = scenario;
  return MakeTable(state, *scenario);
}

}  // namespace

#ifdef FAKE_LIBTPU_LATER_DEFAULT_VERSION
// A later libtpu whose default GetLibtpuSdkApi (what a plain dlsym finds) is of another ABI, VERS_2.0, with
// no table for runmon, while the VERS_1.0 entry stays under its version (fake_libtpu_two_versions.map).
FAKE_LIBTPU_EXPORT const void* GetLibtpuSdkApiOfVers1() {
  return CurrentTable();
}
FAKE_LIBTPU_EXPORT const void* GetLibtpuSdkApiOfVers2() {
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  ++state.counters.api_calls;
  return nullptr;
}
__asm__(".symver GetLibtpuSdkApiOfVers1, GetLibtpuSdkApi@VERS_1.0");
__asm__(".symver GetLibtpuSdkApiOfVers2, GetLibtpuSdkApi@@VERS_2.0");
#else
FAKE_LIBTPU_EXPORT const void* GetLibtpuSdkApi() {
  return CurrentTable();
}
#endif

FAKE_LIBTPU_EXPORT void fake_libtpu_counters(FakeLibtpuCounters* counters) {
  State& state = TheState();
  const std::lock_guard lock(state.mutex);
  *counters = state.counters;
}
