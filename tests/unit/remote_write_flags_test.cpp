// The remote-write flags' checks (app/remote_write_flags.hpp): sizes, header assignments, the refusals of
// URLs with credentials and of headers the protocol sets, token files, and stable queue directory names.
#include "app/remote_write_flags.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.hpp"

namespace runmon {
namespace {

TEST(ParseByteSize, BinaryDecimalAndBareBytes) {
  EXPECT_EQ(*ParseByteSize("256MiB"), uint64_t{256} << 20);
  EXPECT_EQ(*ParseByteSize("1 GiB"), uint64_t{1} << 30);
  EXPECT_EQ(*ParseByteSize("64kib"), uint64_t{64} << 10);
  EXPECT_EQ(*ParseByteSize("500MB"), uint64_t{500} * 1000 * 1000);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize(" 12B "), 12u);
}

TEST(ParseByteSize, RefusesWhatIsNotASize) {
  for (const char* text :
       {"", "MiB", "-1MiB", "12 parsecs", "1.5GiB", "99999999999999999999", "20000000TiB"}) {
    EXPECT_FALSE(ParseByteSize(text).ok()) << text;
  }
  EXPECT_NE(ParseByteSize("12 parsecs").error().find("unknown unit"), std::string::npos);
}

TEST(QueueDirectoryName, HostPortAndAStableHash) {
  const std::string name = QueueDirectoryName("http://127.0.0.1:9090/api/v1/write");
  EXPECT_EQ(name.rfind("127.0.0.1_9090-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("127.0.0.1_9090-").size() + 8);
  EXPECT_EQ(name, QueueDirectoryName("http://127.0.0.1:9090/api/v1/write"));
  EXPECT_NE(name, QueueDirectoryName("http://127.0.0.1:9090/api/v1/push"));
  const std::string odd = QueueDirectoryName("https://[::1]:9/../x?y=/z");
  EXPECT_EQ(odd.find('/'), std::string::npos) << odd;
  EXPECT_EQ(odd.find(".."), std::string::npos) << odd;
}

RemoteWriteFlags WithUrl(std::string url) {
  RemoteWriteFlags flags;
  flags.urls = {std::move(url)};
  return flags;
}

TEST(ResolveRemoteWrite, NoUrlNoDestinations) {
  auto setup = ResolveRemoteWrite({});
  ASSERT_TRUE(setup.ok());
  EXPECT_TRUE(setup->destinations.empty());
  RemoteWriteFlags orphan;
  orphan.headers = {"A=b"};
  EXPECT_NE(ResolveRemoteWrite(orphan).error().find("go with --remote-write"), std::string::npos);
}

TEST(ResolveRemoteWrite, TakesHeadersAndDefaults) {
  RemoteWriteFlags flags = WithUrl("http://127.0.0.1:9090/api/v1/write");
  flags.urls.push_back("https://mimir.example:443/api/v1/push");
  flags.headers = {"X-Scope-OrgID=tenant-1", "Authorization=Basic dXNlcjpwdw==", "X-Empty="};
  auto setup = ResolveRemoteWrite(flags);
  ASSERT_TRUE(setup.ok()) << setup.error();
  ASSERT_EQ(setup->destinations.size(), 2u);
  EXPECT_EQ(setup->queue_max_bytes, uint64_t{256} << 20);
  EXPECT_EQ(setup->drain_timeout_seconds, 10);
  const auto& headers = setup->destinations[0].headers;
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0], (std::pair<std::string, std::string>{"X-Scope-OrgID", "tenant-1"}));
  EXPECT_EQ(headers[2].second, "");
  EXPECT_NE(setup->destinations[0].queue_directory_name, setup->destinations[1].queue_directory_name);
}

TEST(ResolveRemoteWrite, RefusesBadInput) {
  struct Case {
    RemoteWriteFlags flags;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({WithUrl("http://user:secret@127.0.0.1:9090/api/v1/write"), "Authorization"});
  cases.push_back({WithUrl("ftp://127.0.0.1/x"), "--remote-write"});
  cases.push_back({WithUrl("not a url"), "--remote-write"});
  for (const char* header : {"novalue", "=x", "Bad Name=x", "Content-Encoding=gzip", "content-type=x",
                             "X-Prometheus-Remote-Write-Version=2", "Host=evil"}) {
    RemoteWriteFlags flags = WithUrl("http://127.0.0.1:9/w");
    flags.headers = {header};
    cases.push_back({flags, "--remote-write-header"});
  }
  RemoteWriteFlags line_break = WithUrl("http://127.0.0.1:9/w");
  line_break.headers = {std::string("X-A=1\r\nX-B: 2")};
  cases.push_back({line_break, "line break"});
  RemoteWriteFlags twice = WithUrl("http://127.0.0.1:9/w");
  twice.urls.push_back("http://127.0.0.1:9/w");
  cases.push_back({twice, "given twice"});
  RemoteWriteFlags small = WithUrl("http://127.0.0.1:9/w");
  small.queue_size = "1KiB";
  cases.push_back({small, "at least"});
  RemoteWriteFlags drain = WithUrl("http://127.0.0.1:9/w");
  drain.drain_timeout_seconds = -1;
  cases.push_back({drain, "--remote-write-drain-timeout"});
  RemoteWriteFlags missing_token = WithUrl("http://127.0.0.1:9/w");
  missing_token.bearer_token_file = "/nonexistent/token";
  cases.push_back({missing_token, "cannot be read"});
  for (const auto& c : cases) {
    auto setup = ResolveRemoteWrite(c.flags);
    ASSERT_FALSE(setup.ok()) << c.message;
    EXPECT_NE(setup.error().find(c.message), std::string::npos) << setup.error();
  }
}

TEST(ResolveRemoteWrite, TokenFileChecks) {
  test::TempDir dir;
  const auto token = dir.path() / "token";
  const auto empty = dir.path() / "empty";
  std::ofstream(token) << "s3cret\n";
  std::ofstream(empty) << "\n  \n";
  RemoteWriteFlags flags = WithUrl("http://127.0.0.1:9/w");
  flags.bearer_token_file = token.string();
  ASSERT_TRUE(ResolveRemoteWrite(flags).ok());
  flags.headers = {"Authorization=Bearer x"};
  EXPECT_NE(ResolveRemoteWrite(flags).error().find("give one of them"), std::string::npos);
  flags.headers.clear();
  flags.bearer_token_file = empty.string();
  EXPECT_NE(ResolveRemoteWrite(flags).error().find("empty"), std::string::npos);
}

}  // namespace
}  // namespace runmon
