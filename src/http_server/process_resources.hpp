// Process-wide settings for a server that may run a thousand connection threads:
// - open files: every connection is a descriptor, and the soft RLIMIT_NOFILE is often 1024; it is raised to
//   the hard limit (never lowered), so the connection cap, not EMFILE, decides who is served.
// - memory: glibc gives threads their own malloc arenas (up to 8 per core), and memory freed in an arena
// stays
//   with the process; after a burst of clients the server kept hundreds of MB. The arenas are capped and,
//   when the worker pool is back at its floor, freed memory is returned to the system (malloc_trim; with
//   AddressSanitizer its allocator is asked to do the same).
#pragma once

#include <sys/resource.h>

namespace runmon::http_server {

// Raises the soft limit of open files to the hard limit; returns the soft limit now in force.
rlim_t RaiseOpenFileLimit();
// Caps glibc's malloc arenas (M_ARENA_MAX) for the rest of the process; idempotent.
void LimitMallocArenas();
// Returns free heap memory to the system.
void ReleaseFreeMemory();

}  // namespace runmon::http_server
