// Open-file limit and heap settings of runmon's HTTP servers. See process_resources.hpp.
#include "http_server/process_resources.hpp"

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUNMON_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RUNMON_ASAN 1
#endif
#ifdef RUNMON_ASAN
#include <sanitizer/allocator_interface.h>
#endif

namespace runmon::http_server {
namespace {

// Two arenas: the connection threads mostly build a response and free it, which contends little; the
// sampler and the run store keep the main arena.
constexpr int kMallocArenas = 2;

}  // namespace

rlim_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised.rlim_cur;
  }
  return limit.rlim_cur;
}

void LimitMallocArenas() {
  ::mallopt(M_ARENA_MAX, kMallocArenas);
}

void ReleaseFreeMemory() {
  ::malloc_trim(0);
#ifdef RUNMON_ASAN
  __sanitizer_purge_allocator();
#endif
}

}  // namespace runmon::http_server
