// libcurl, loaded when the first OpenMetrics endpoint is scraped rather than linked: libcurl and the TLS,
// SSH, LDAP and Kerberos libraries it depends on cost a process about 6 MB of resident memory at start, which
// a run that scrapes nothing should not pay. The functions are typed from <curl/curl.h> itself (decltype), so
// the build checks every call against the installed headers; only the loading happens at run time.
#pragma once

#include <curl/curl.h>

#include <initializer_list>
#include <string>

#include "core/result.hpp"

namespace runmon::openmetrics {

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

}  // namespace runmon::openmetrics
