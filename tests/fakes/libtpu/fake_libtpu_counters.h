/* What the fake libtpu.so has seen since it was loaded, read by tests through
   dlsym(handle, "fake_libtpu_counters"): how many calls, and how many clients and error handles it made and
   had destroyed, so a test proves that a refused table had no slot called and that nothing leaks. */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FakeLibtpuCounters {
  unsigned long long api_calls;             /* GetLibtpuSdkApi */
  unsigned long long slot_calls;            /* every slot of the table, those runmon never calls included */
  unsigned long long unexpected_slot_calls; /* the slots the fake does not implement */
  unsigned long long clients_created;
  unsigned long long clients_destroyed;
  unsigned long long errors_created;
  unsigned long long errors_destroyed;
  unsigned long long
      bad_handles; /* a client, metric or error handle given back that is not (or no longer) live */
} FakeLibtpuCounters;

typedef void (*FakeLibtpuCountersFunction)(FakeLibtpuCounters* counters);

#ifdef __cplusplus
}
#endif
