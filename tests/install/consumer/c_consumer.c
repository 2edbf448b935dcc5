/* The installed C interface (runmon.h, librunmon.so) from C: a run of its own in the directory given as
 * the argument, three steps of two values, finished with exit code 0. */
#include <runmon/runmon.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  runmon_run_options options = RUNMON_RUN_OPTIONS_INIT;
  options.dir = argv[1];
  options.name = "C consumer";
  options.interval = 0.2;
  runmon_run* run = runmon_run_start(&options);
  if (run == NULL) {
    fprintf(stderr, "%s\n", runmon_last_error());
    return 1;
  }
  const char* keys[] = {"loss", "lr"};
  for (int step = 0; step < 3; ++step) {
    double values[] = {1.0 / (step + 1), 1e-3};
    if (!runmon_run_log(run, keys, values, 2, step)) return 1;
  }
  return runmon_run_finish(run, 0) ? 0 : 1;
}
