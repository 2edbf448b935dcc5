// Loads libcurl with dlopen on first use (see curl_library.hpp). The handle is never closed: libcurl keeps
// global state (its initialisation, OpenSSL's) for the whole process once a transfer has run.
#include "http_client/curl_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <optional>

#include <fmt/format.h>

namespace runmon::http {
namespace {

template <typename Function>
bool Resolve(void* handle, const char* name, Function& out, std::string& missing) {
  out = reinterpret_cast<Function>(dlsym(handle, name));
  if (out == nullptr && missing.empty()) missing = name;
  return out != nullptr;
}

Result<CurlLibrary> LoadFrom(const char* name) {
  dlerror();
  void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error{why != nullptr ? std::string(why) : fmt::format("{}: cannot be loaded", name)};
  }
  CurlLibrary library;
  std::string missing;
  Resolve(handle, "curl_global_init", library.global_init, missing);
  Resolve(handle, "curl_easy_init", library.easy_init, missing);
  Resolve(handle, "curl_easy_cleanup", library.easy_cleanup, missing);
  Resolve(handle, "curl_easy_setopt", library.easy_setopt, missing);
  Resolve(handle, "curl_easy_getinfo", library.easy_getinfo, missing);
  Resolve(handle, "curl_easy_perform", library.easy_perform, missing);
  Resolve(handle, "curl_easy_strerror", library.easy_strerror, missing);
  Resolve(handle, "curl_slist_append", library.slist_append, missing);
  Resolve(handle, "curl_slist_free_all", library.slist_free_all, missing);
  if (!missing.empty()) {
    dlclose(handle);
    return Error{fmt::format("{}: no function {} (not libcurl?)", name, missing)};
  }
  return library;
}

}  // namespace

Result<CurlLibrary> LoadCurlLibrary(std::initializer_list<const char*> names) {
  std::string tried;
  for (const char* name : names) {
    auto library = LoadFrom(name);
    if (library) return library;
    tried += tried.empty() ? library.error() : "; " + library.error();
  }
  return Error{fmt::format("libcurl cannot be loaded ({})", tried.empty() ? "no file names" : tried)};
}

Result<const CurlLibrary*> SharedCurlLibrary() {
  static std::once_flag once;
  static std::optional<Result<CurlLibrary>> loaded;
  std::call_once(once, [] {
    loaded.emplace(LoadCurlLibrary(kCurlLibraryNames));
    if (*loaded && (**loaded).global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      loaded.emplace(Error{"libcurl could not be initialised"});
    }
  });
  if (!*loaded) return Error{loaded->error()};
  return &**loaded;
}

Result<CurlHandle> NewCurlHandle(const std::string& url, long max_redirects, char* error_buffer) {
  auto library = SharedCurlLibrary();
  if (!library) return Error{library.error()};
  CurlHandle made{.library = *library, .handle = (*library)->easy_init()};
  if (made.handle == nullptr) return Error{"libcurl could not create a handle"};
  made.library->easy_setopt(made.handle, CURLOPT_URL, url.c_str());
  made.library->easy_setopt(made.handle, CURLOPT_NOSIGNAL, 1L);
  made.library->easy_setopt(made.handle, CURLOPT_PROTOCOLS_STR, "http,https");
  made.library->easy_setopt(made.handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  made.library->easy_setopt(made.handle, CURLOPT_FOLLOWLOCATION, 1L);
  made.library->easy_setopt(made.handle, CURLOPT_MAXREDIRS, max_redirects);
  made.library->easy_setopt(made.handle, CURLOPT_ERRORBUFFER, error_buffer);
  return made;
}

std::string CurlHeaderLine(std::string_view name, std::string_view value) {
  return value.empty() ? fmt::format("{};", name) : fmt::format("{}: {}", name, value);
}

}  // namespace runmon::http
