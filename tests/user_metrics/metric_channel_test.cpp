// The metrics channel on a real Unix socket (metric_channel.hpp): rows from several writers at once, a
// flood read whole, lines cut across writes, a line longer than the limit skipped to its end with the
// lines after it kept, bad lines counted and reported once, a connection left unended at the end, a
// writer that stays connected past the grace time, connections past the limit refused, the socket's mode,
// an old socket replaced and anything else at the path refused.
#include "user_metrics/metric_channel.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"
#include "support/wait_until.hpp"

namespace runmon::user_metrics {
namespace {

using namespace std::chrono_literals;

int Connect(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0) << path;
  return fd;
}

void Send(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ASSERT_GT(sent, 0);
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
}

class MetricChannelTest : public ::testing::Test {
 protected:
  std::unique_ptr<MetricChannel> Open(MetricChannelOptions options = {}) {
    auto channel = MetricChannel::Open(dir_.path() / "run.sock", options);
    EXPECT_TRUE(channel.ok()) << (channel.ok() ? "" : channel.error());
    (*channel)->Start(
        [this](std::vector<HistoryRow>& rows) {
          std::lock_guard lock(mutex_);
          for (HistoryRow& row : rows) rows_.push_back(std::move(row));
        },
        [this](const std::string& warning) {
          std::lock_guard lock(mutex_);
          warnings_.push_back(warning);
        });
    return std::move(*channel);
  }
  std::vector<HistoryRow> Rows() {
    std::lock_guard lock(mutex_);
    return rows_;
  }

  test::TempDir dir_{"metric_channel_test"};
  std::mutex mutex_;
  std::vector<HistoryRow> rows_;
  std::vector<std::string> warnings_;
};

TEST_F(MetricChannelTest, SeveralWritersAtOnceAndAFloodAreReadWhole) {
  auto channel = Open();
  struct stat info {};
  ASSERT_EQ(::stat(channel->path().c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  constexpr int kWriters = 4;
  constexpr int kLines = 20000;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const int fd = Connect(channel->path());
      std::string batch;
      for (int i = 0; i < kLines; ++i) {
        batch += "{\"w" + std::to_string(w) + "\": " + std::to_string(i) + "}\n";
        if (batch.size() > 3000) {
          Send(fd, batch);
          batch.clear();
        }
      }
      Send(fd, batch);
      ::close(fd);
    });
  }
  for (auto& writer : writers) writer.join();
  channel->Finish(5s);
  const auto rows = Rows();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kWriters * kLines));
  // Each line was its own step, in the order read; each writer's values in its own order.
  std::vector<int> next(kWriters, 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].step, static_cast<int64_t>(i));
    ASSERT_EQ(rows[i].items.size(), 1u);
    const int writer = rows[i].items[0].key[1] - '0';
    EXPECT_EQ(rows[i].items[0].value_json, std::to_string(next[static_cast<size_t>(writer)]++));
  }
  const auto counts = channel->counts();
  EXPECT_EQ(counts.lines, static_cast<uint64_t>(kWriters * kLines));
  EXPECT_EQ(counts.bad_lines, 0u);
  EXPECT_EQ(counts.connections, static_cast<uint64_t>(kWriters));
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(channel->Summary().size(), static_cast<size_t>(kWriters));
}

TEST_F(MetricChannelTest, LinesCutAcrossWritesLongLinesAndBadLines) {
  auto channel = Open({.max_line_bytes = 1000});
  const int fd = Connect(channel->path());
  Send(fd, "{\"a\": ");
  std::this_thread::sleep_for(20ms);
  Send(fd, "1, \"_step\": 3}\r\n{\"b\": 2, \"_step\": 3}\n");
  Send(fd, "{\"long\": \"" + std::string(5000, 'x'));
  std::this_thread::sleep_for(20ms);
  Send(fd, std::string(5000, 'y') + "\"}\n{\"c\": 3, \"_step\": 4}\nnot json\n\n{\"d\": 4, \"_step\": 2}\n");
  Send(fd, "{\"e\": 5}");  // unended when the writer goes
  ::close(fd);
  channel->Finish(5s);
  const auto rows = Rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, 3);
  EXPECT_EQ(rows[0].items, (std::vector<MetricItem>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(rows[1].step, 4);  // "e" joined the open row at 4 and committed it
  EXPECT_EQ(rows[1].items, (std::vector<MetricItem>{{"c", "3"}, {"e", "5"}}));
  const auto counts = channel->counts();
  EXPECT_EQ(counts.bad_lines, 3u);  // the long line, "not json", the step that went back
  EXPECT_EQ(counts.lines, 7u);      // the empty line is no line
  ASSERT_EQ(warnings_.size(), 1u);  // reported once
  EXPECT_EQ(warnings_[0], "a metrics line was passed over (longer than 1000 bytes); later ones are counted");
}

TEST_F(MetricChannelTest, AnIdleRowShowsBeforeTheEnd) {
  auto channel = Open({.idle_row_seconds = 0.1});
  const int fd = Connect(channel->path());
  Send(fd, "{\"loss\": 1, \"_step\": 7}\n");
  EXPECT_TRUE(testing::WaitUntil([&] { return Rows().size() == 1; }, 10s));
  ::close(fd);
  channel->Finish(1s);
  EXPECT_EQ(Rows().at(0).step, 7);
}

TEST_F(MetricChannelTest, AWriterThatStaysConnectedDoesNotHoldTheEndAndTheLimitRefusesMore) {
  auto channel = Open({.max_connections = 2});
  const int stays = Connect(channel->path());
  Send(stays, "{\"x\": 1}\n");
  const int second = Connect(channel->path());
  ASSERT_TRUE(testing::WaitUntil([&] { return channel->counts().connections == 2; }, 10s));
  const int third = Connect(channel->path());  // accepted by the kernel, closed by the channel
  ASSERT_TRUE(testing::WaitUntil([&] { return channel->counts().connections_refused == 1; }, 10s));
  char byte = 0;
  EXPECT_EQ(::read(third, &byte, 1), 0);  // closed
  const auto start = std::chrono::steady_clock::now();
  channel->Finish(300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(Rows().size(), 1u);
  ::close(stays);
  ::close(second);
  ::close(third);
}

TEST_F(MetricChannelTest, AConnectionMadeJustBeforeTheEndIsRead) {
  auto channel = Open();
  const int fd = Connect(channel->path());
  Send(fd, "{\"last\": 1}\n");
  ::close(fd);
  channel->Finish(2s);  // at once: the connection may not have been taken yet
  EXPECT_EQ(Rows().size(), 1u);
}

TEST_F(MetricChannelTest, TheSocketPathIsCheckedAndAnOldSocketReplaced) {
  {
    auto first = MetricChannel::Open(dir_.path() / "run.sock");
    ASSERT_TRUE(first.ok());
    // Left behind as a crash would leave it: the file stays while the descriptor closes.
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "run.sock"));  // removed when the channel went
  std::ofstream(dir_.path() / "file.sock") << "not a socket";
  auto file = MetricChannel::Open(dir_.path() / "file.sock");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.error().find("exists and is not a socket"), std::string::npos);
  auto longer = MetricChannel::Open(dir_.path() / std::string(120, 'x'));
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.error().find("longer than a socket's path may be (107 bytes)"), std::string::npos);
  // An old socket file (from a crashed run) is replaced.
  const int old = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const auto stale = dir_.path() / "stale.sock";
  std::strncpy(address.sun_path, stale.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(old, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  ::close(old);
  auto replaced = MetricChannel::Open(stale);
  EXPECT_TRUE(replaced.ok()) << (replaced.ok() ? "" : replaced.error());
}

}  // namespace
}  // namespace runmon::user_metrics
