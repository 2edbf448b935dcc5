/* runmon/runmon.h: the C interface of runmon's in-process API (runmon/run.hpp), for C and for other
 * languages' foreign-function interfaces (Python's ctypes, Rust, Go). Link with -lrunmon (pkg-config
 * --libs runmon).
 *
 *   runmon_run_options options = RUNMON_RUN_OPTIONS_INIT;
 *   options.dir = "wandb";
 *   options.interval = 1.0;
 *   runmon_run* run = runmon_run_start(&options);
 *   if (!run) fprintf(stderr, "%s\n", runmon_last_error());
 *   const char* keys[] = {"loss"};
 *   double values[] = {0.25};
 *   runmon_run_log(run, keys, values, 1, 7);
 *   runmon_run_finish(run, 0);
 *
 * Every function but runmon_run_start and runmon_run_finish is thread-safe on one run and never blocks on
 * the disk; a run is freed by runmon_run_finish, after which its pointer must not be used. Functions given a
 * NULL run do nothing and return 0. Strings are UTF-8 (what is not is replaced). */
#ifndef RUNMON_RUNMON_H
#define RUNMON_RUNMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct runmon_run runmon_run;

/* A log call without a step: the values join the step the last call named and end it, or take the next. */
#define RUNMON_NO_STEP INT64_MIN

typedef struct runmon_run_options {
  size_t size;         /* sizeof(runmon_run_options), as RUNMON_RUN_OPTIONS_INIT sets it */
  const char* dir;     /* where runs go; NULL: "wandb" */
  const char* name;    /* display name; NULL: the program's name */
  const char* project; /* may be NULL */
  const char* id;      /* NULL: a new id */
  double interval;     /* seconds between samples, at least 0.1; 0: 15 s, or W&B's setting */
} runmon_run_options;

#define RUNMON_RUN_OPTIONS_INIT \
  { sizeof(runmon_run_options), NULL, NULL, NULL, NULL, 0.0 }

/* Starts a run; NULL when it cannot (then runmon_last_error() says why, in this thread). */
runmon_run* runmon_run_start(const runmon_run_options* options);
/* `count` values named by `keys` at `step` (RUNMON_NO_STEP for none). 1: taken; 0: refused, counted. */
int runmon_run_log(runmon_run* run, const char* const* keys, const double* values, size_t count,
                   int64_t step);
/* One line of the metrics protocol (docs/training-metrics.md): a JSON object of `length` bytes. */
int runmon_run_log_json(runmon_run* run, const char* line, size_t length);
/* Summary values, which win over the last logged values of their keys. */
int runmon_run_summary(runmon_run* run, const char* const* keys, const double* values, size_t count);
/* Values, lines and rows not recorded so far. */
uint64_t runmon_run_dropped(const runmon_run* run);
/* The run's id and its directory, valid until runmon_run_finish. */
const char* runmon_run_id(const runmon_run* run);
const char* runmon_run_directory(const runmon_run* run);
/* Ends the run with `exit_code` and frees it. 1: everything was written; 0: the log is incomplete. */
int runmon_run_finish(runmon_run* run, int exit_code);
/* Why the last runmon_run_start of this thread failed ("" when it did not). */
const char* runmon_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* RUNMON_RUNMON_H */
