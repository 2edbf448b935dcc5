// libcurl loaded at run time (http_client/curl_library.hpp): the installed library loads with
// every function, and a missing file or a library that is not libcurl is refused with words naming the file.
#include "http_client/curl_library.hpp"

#include <gtest/gtest.h>

namespace runmon::http {
namespace {

TEST(CurlLibrary, TheInstalledLibraryLoadsWithEveryFunction) {
  auto library = LoadCurlLibrary(kCurlLibraryNames);
  ASSERT_TRUE(library) << library.error();
  EXPECT_NE(library->easy_init, nullptr);
  EXPECT_NE(library->easy_setopt, nullptr);
  EXPECT_NE(library->slist_free_all, nullptr);
  EXPECT_STREQ(library->easy_strerror(CURLE_OK), "No error");
}

TEST(CurlLibrary, SharedLibraryIsLoadedOnceAndInitialised) {
  auto first = SharedCurlLibrary();
  ASSERT_TRUE(first) << first.error();
  auto second = SharedCurlLibrary();
  ASSERT_TRUE(second);
  EXPECT_EQ(*first, *second);
  CURL* handle = (*first)->easy_init();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ((*first)->easy_setopt(handle, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
  (*first)->easy_cleanup(handle);
}

TEST(CurlLibrary, AMissingFileIsNamed) {
  auto library = LoadCurlLibrary({"libcurl-runmon-missing.so.4"});
  ASSERT_FALSE(library);
  EXPECT_NE(library.error().find("libcurl cannot be loaded"), std::string::npos) << library.error();
  EXPECT_NE(library.error().find("libcurl-runmon-missing.so.4"), std::string::npos) << library.error();
}

TEST(CurlLibrary, ALibraryThatIsNotLibcurlIsRefused) {
  auto library = LoadCurlLibrary({"libcurl-runmon-missing.so.4", "libz.so.1"});
  ASSERT_FALSE(library);
  EXPECT_NE(library.error().find("libz.so.1: no function curl_global_init (not libcurl?)"), std::string::npos)
      << library.error();
  EXPECT_NE(library.error().find("libcurl-runmon-missing.so.4"), std::string::npos) << library.error();
}

TEST(CurlLibrary, NoNamesIsAnError) {
  auto library = LoadCurlLibrary({});
  ASSERT_FALSE(library);
  EXPECT_NE(library.error().find("no file names"), std::string::npos);
}

}  // namespace
}  // namespace runmon::http
