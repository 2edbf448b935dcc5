// libcurl, loaded when the first request is made (an OpenMetrics scrape, a remote-write POST) rather than
// linked: libcurl and the TLS, SSH, LDAP and Kerberos libraries it depends on cost a process about 6 MB of
// resident memory at start, which a run that needs no HTTP should not pay. The functions are typed from
// <curl/curl.h> itself (decltype), so the build checks every call against the installed headers; only the
// loading happens at run time.
// NewCurlHandle makes a handle with the options every runmon transfer shares (the scraper's GET, remote
// write's POST).
#pragma once

#include <curl/curl.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace runmon::http {

struct CurlLibrary {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_perform) easy_perform = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
};

// The file names tried, in order: the OpenSSL build Debian's libcurl4 installs, then the GnuTLS build
// (libcurl3-gnutls), which has the same interface.
inline constexpr std::initializer_list<const char*> kCurlLibraryNames = {"libcurl.so.4",
                                                                         "libcurl-gnutls.so.4"};

// The process's libcurl, loaded and initialised (curl_global_init) on the first call and kept for the
// process's life; later calls return the same library or the same error. Thread-safe.
Result<const CurlLibrary*> SharedCurlLibrary();

// Loads the first of `names` that opens and has every function, without initialising it. For tests of the
// loading itself; the error names each file tried and why it was refused.
Result<CurlLibrary> LoadCurlLibrary(std::initializer_list<const char*> names);

struct CurlHandle {
  const CurlLibrary* library = nullptr;
  CURL* handle = nullptr;
};

// A new easy handle of the process's libcurl (SharedCurlLibrary) for `url`, set up as every runmon transfer
// is: no signals (the callers are threads), only http and https, also on redirects, which are followed up
// to `max_redirects`, and libcurl's message for a failure written to `error_buffer` (CURL_ERROR_SIZE bytes,
// which must outlive the handle). The error says why when libcurl cannot be loaded or makes no handle.
Result<CurlHandle> NewCurlHandle(const std::string& url, long max_redirects, char* error_buffer);

// The header line libcurl is given: "Name: value", or "Name;" for an empty value ("Name:" alone would make
// libcurl remove the header instead of sending it empty).
std::string CurlHeaderLine(std::string_view name, std::string_view value);

}  // namespace runmon::http
