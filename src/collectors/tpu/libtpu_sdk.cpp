// libtpu's monitoring SDK through the C table GetLibtpuSdkApi returns (libtpu_sdk.hpp, metrics.md B §7.2),
// and where libtpu.so is. The table is undocumented ABI, so everything libtpu hands back is checked before
// it is used: the table's header words and every slot runmon calls before any slot is called, then each
// pointer and length a slot writes (a null metric handle, a description over 64 KiB or null with a length,
// more than 4096 values, a null value array with a count, a value string without a NUL within 64 KiB).
// Slots are read with memcpy because nothing promises the table is aligned, and copied once when the table
// is checked, so a later GetLibtpuSdkApi that changes it cannot change what was checked. Every error handle
// libtpu returns is read (ErrorMessage) and destroyed (DestroyError) at once; the results of those two are
// not read, as W&B does not: an error while reporting an error has no recovery. Strings are kept as bytes,
// invalid UTF-8 included: the parsers downstream are byte-safe.
#include "collectors/tpu/libtpu_sdk.hpp"

#include "collectors/tpu/libtpu_sdk_abi.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace runmon::tpu {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxStringBytes = 64 * 1024;
constexpr std::size_t kMaxValueCount = 4096;

using namespace sdk_abi;
using GetApiFunction = const void* (*)();

SlotFunction ReadSlot(const unsigned char* table, const Slot& slot) {
  SlotFunction function = nullptr;
  std::memcpy(&function, table + slot.offset, sizeof function);
  return function;
}

std::uint32_t ReadWord(const unsigned char* table, std::size_t offset) {
  std::uint32_t word = 0;
  std::memcpy(&word, table + offset, sizeof word);
  return word;
}

// The slots runmon calls, copied out of a checked table.
struct SdkFunctions {
  SlotFunction error_message;
  SlotFunction destroy_error;
  SlotFunction create_client;
  SlotFunction destroy_client;
  SlotFunction get_metric;
  SlotFunction get_metric_description;
  SlotFunction get_metric_values;

  // The message of `error` (at most 64 KiB of it), which is destroyed.
  std::string ErrorText(void* error) const {
    ErrorMessageArgs message{error, nullptr, 0};
    error_message(&message);
    std::string text;
    if (message.message != nullptr && message.message_len > 0) {
      text.assign(message.message, std::min(message.message_len, kMaxStringBytes));
    } else {
      text = "unknown error";
    }
    DestroyErrorArgs destroy{error};
    destroy_error(&destroy);
    return text;
  }
};

Result<SdkFunctions> CheckTable(const void* api) {
  if (api == nullptr) return Error{"GetLibtpuSdkApi returned a null table"};
  const auto* table = static_cast<const unsigned char*>(api);
  const std::uint32_t word0 = ReadWord(table, 0);
  const std::uint32_t word1 = ReadWord(table, 4);
  if (word0 != kHeaderWord0 || word1 != kHeaderWord1) {
    return Error{fmt::format("unexpected table header {} {} (expected {} {})", word0, word1, kHeaderWord0,
                             kHeaderWord1)};
  }
  for (const Slot& slot : kSlots) {
    if (ReadSlot(table, slot) == nullptr) {
      return Error{fmt::format("required slot {} at offset {:#x} is null", slot.name, slot.offset)};
    }
  }
  return SdkFunctions{ReadSlot(table, kErrorMessage),   ReadSlot(table, kDestroyError),
                      ReadSlot(table, kCreateClient),   ReadSlot(table, kDestroyClient),
                      ReadSlot(table, kGetMetric),      ReadSlot(table, kGetMetricDescription),
                      ReadSlot(table, kGetMetricValues)};
}

class SdkClient final : public LibtpuSdk {
 public:
  SdkClient(const SdkFunctions& functions, void* client) : functions_(functions), client_(client) {}
  SdkClient(const SdkClient&) = delete;
  SdkClient& operator=(const SdkClient&) = delete;
  ~SdkClient() override {
    DestroyClientArgs args{client_};
    // Nothing is left to do about a failure here; its handle is destroyed all the same.
    if (void* error = functions_.destroy_client(&args)) static_cast<void>(functions_.ErrorText(error));
  }

  Result<SdkMetricValues> ReadMetric(const std::string& name) override {
    if (name.find('\0') != std::string::npos) return Error{"a metric name cannot hold a NUL byte"};
    GetMetricArgs metric{client_, name.c_str(), nullptr};
    if (void* error = functions_.get_metric(&metric)) return Failed("GetMetric", name, error);
    if (metric.metric == nullptr) return Error{fmt::format("GetMetric({}) gave a null metric handle", name)};

    SdkMetricValues read;
    GetMetricDescriptionArgs description{metric.metric, nullptr, 0};
    if (void* error = functions_.get_metric_description(&description)) {
      return Failed("GetMetricDescription", name, error);
    }
    if (description.description_len > kMaxStringBytes) {
      return Error{fmt::format("GetMetricDescription({}) gave {} bytes, over the {} byte cap", name,
                               description.description_len, kMaxStringBytes)};
    }
    if (description.description_len > 0) {
      if (description.description == nullptr) {
        return Error{fmt::format("GetMetricDescription({}) gave a null description of {} bytes", name,
                                 description.description_len)};
      }
      read.description.assign(description.description, description.description_len);
    }

    GetMetricValuesArgs values{metric.metric, nullptr, 0};
    if (void* error = functions_.get_metric_values(&values)) return Failed("GetMetricValues", name, error);
    if (values.value_count > kMaxValueCount) {
      return Error{fmt::format("GetMetricValues({}) gave {} values, over the {} value cap", name,
                               values.value_count, kMaxValueCount)};
    }
    if (values.value_count > 0 && values.values == nullptr) {
      return Error{
          fmt::format("GetMetricValues({}) gave a null value array of {} values", name, values.value_count)};
    }
    read.values.reserve(values.value_count);
    for (std::size_t i = 0; i < values.value_count; ++i) {
      const char* value = values.values[i];
      if (value == nullptr) {
        read.values.emplace_back();
        continue;
      }
      const std::size_t length = ::strnlen(value, kMaxStringBytes + 1);
      if (length > kMaxStringBytes) {
        return Error{fmt::format("GetMetricValues({}) value {} has no end within the {} byte cap", name, i,
                                 kMaxStringBytes)};
      }
      read.values.emplace_back(value, length);
    }
    return read;
  }

 private:
  Error Failed(std::string_view slot, const std::string& name, void* error) const {
    return Error{fmt::format("{}({}): {}", slot, name, functions_.ErrorText(error))};
  }

  SdkFunctions functions_;
  void* client_;
};

Result<std::unique_ptr<LibtpuSdk>> Open(const fs::path& library) {
  // A name without a slash would make dlopen search the library path: a relative path is the working
  // directory's file, as FindLibtpu found it.
  const fs::path file = library.is_relative() ? fs::path(".") / library : library;
  ::dlerror();
  // Never closed: libtpu is not made to be unloaded.
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    return Error{fmt::format("cannot load: {}", reason != nullptr ? reason : "unknown error")};
  }
  void* entry = ::dlvsym(handle, "GetLibtpuSdkApi", "VERS_1.0");
  if (entry == nullptr) entry = ::dlsym(handle, "GetLibtpuSdkApi");
  if (entry == nullptr) return Error{"no GetLibtpuSdkApi exported"};
  auto functions = CheckTable(reinterpret_cast<GetApiFunction>(entry)());
  if (!functions) return Error{functions.error()};

  CreateClientArgs create{nullptr};
  if (void* error = functions->create_client(&create)) {
    return Error{fmt::format("CreateClient: {}", functions->ErrorText(error))};
  }
  if (create.client == nullptr) return Error{"CreateClient gave a null client"};
  return std::unique_ptr<LibtpuSdk>(std::make_unique<SdkClient>(*functions, create.client));
}

// `path` when it is a regular file, its libtpu.so when it is a directory holding one as a regular file.
std::optional<fs::path> UsableLibrary(const fs::path& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) {
    fs::path inside = path / "libtpu.so";
    if (fs::is_regular_file(inside, error)) return inside;
    return std::nullopt;
  }
  if (fs::is_regular_file(path, error)) return path;
  return std::nullopt;
}

std::string_view TrimmedAscii(std::string_view text) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

// Version order of "python3.11" and "python3.9": runs of digits compare as numbers, the rest as bytes.
bool NewerVersionName(std::string_view a, std::string_view b) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      const std::size_t a_start = i;
      const std::size_t b_start = j;
      while (i < a.size() && digit(a[i])) ++i;
      while (j < b.size() && digit(b[j])) ++j;
      std::string_view a_number = a.substr(a_start, i - a_start);
      std::string_view b_number = b.substr(b_start, j - b_start);
      a_number.remove_prefix(std::min(a_number.find_first_not_of('0'), a_number.size()));
      b_number.remove_prefix(std::min(b_number.find_first_not_of('0'), b_number.size()));
      if (a_number.size() != b_number.size()) return a_number.size() > b_number.size();
      if (a_number != b_number) return a_number > b_number;
      continue;
    }
    if (a[i] != b[j]) return a[i] > b[j];
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i > b.size() - j;
  return a > b;  // equal as versions ("3.010" and "3.10"): the bytes decide
}

// `base`/python*/`below` for every python* entry of `base`, newest version first.
std::vector<fs::path> PythonCandidates(const fs::path& base, const fs::path& below) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(base, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.starts_with("python")) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end(), NewerVersionName);
  std::vector<fs::path> candidates;
  for (const std::string& name : names) candidates.push_back(base / name / below);
  return candidates;
}

std::vector<fs::path> SystemCandidates(const std::map<std::string, std::string>& environment,
                                       const fs::path& root) {
  std::vector<fs::path> candidates{root / "lib", root / "usr/lib", root / "usr/local/lib"};
  const auto append = [&candidates](std::vector<fs::path> more) {
    candidates.insert(candidates.end(), more.begin(), more.end());
  };
  if (const auto home = environment.find("HOME"); home != environment.end() && !home->second.empty()) {
    const fs::path home_dir(home->second);
    append(PythonCandidates(home_dir / ".local/lib", "site-packages/libtpu"));
    append(PythonCandidates(home_dir / ".venv/lib", "site-packages/libtpu"));
  }
  append(PythonCandidates(root / "usr/local/lib", "dist-packages/libtpu"));
  append(PythonCandidates(root / "usr/local/lib", "dist-packages/torch_xla/lib"));
  return candidates;
}

}  // namespace

Result<std::unique_ptr<LibtpuSdk>> OpenLibtpuSdk(const fs::path& library) {
  auto sdk = Open(library);
  if (!sdk) return Error{fmt::format("libtpu SDK {}: {}", library.string(), sdk.error())};
  return sdk;
}

std::optional<fs::path> FindLibtpu(const std::map<std::string, std::string>& environment,
                                   bool search_system) {
  return FindLibtpu(environment, search_system, "/");
}

std::optional<fs::path> FindLibtpu(const std::map<std::string, std::string>& environment, bool search_system,
                                   const fs::path& system_root) {
  // Surrounding blanks are dropped, as W&B trims the value; an empty value names nothing.
  for (const char* variable : {"WANDB_LIBTPU_PATH", "TPU_LIBRARY_PATH", "LIBTPU_PATH"}) {
    const auto value = environment.find(variable);
    if (value == environment.end()) continue;
    const std::string_view path = TrimmedAscii(value->second);
    if (path.empty()) continue;
    if (auto found = UsableLibrary(fs::path(path))) return found;
  }
  if (!search_system) return std::nullopt;
  for (const fs::path& directory : SystemCandidates(environment, system_root)) {
    std::error_code error;
    fs::path library = directory / "libtpu.so";
    if (fs::is_regular_file(library, error)) return library;
  }
  return std::nullopt;
}

}  // namespace runmon::tpu
