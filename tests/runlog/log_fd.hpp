// A log opened for reading for the index tests (the builder, the file and the writer read the log by fd),
// closed at the end of the scope; a failed open fails the test and leaves -1.
#pragma once

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "runlog/log_reader.hpp"

namespace runmon::runlog::testing {

class Fd {
 public:
  explicit Fd(const std::filesystem::path& path) {
    auto fd = OpenLogForReading(path);
    EXPECT_TRUE(fd.ok()) << fd.error();
    fd_ = fd.ok() ? *fd : -1;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace runmon::runlog::testing
