// RunWithin: runs a test's body on a thread of its own and waits for it a bounded time. A read that blocks
// (a FIFO without a writer) cannot be cancelled, so a body still running at the limit is reported as a
// hang and the test process ends at once with a failure, instead of ctest waiting for its own timeout.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace runmon::test {

inline void RunWithin(std::chrono::seconds limit, const std::string& what, std::function<void()> body) {
  auto task = std::make_shared<std::packaged_task<void()>>(std::move(body));
  std::future<void> done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "%s: still running after %lld s: hung\n", what.c_str(),
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  done.get();  // rethrows what the body threw
}

}  // namespace runmon::test
