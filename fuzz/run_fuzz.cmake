# Runs one fuzz target briefly (ctest): copies its seed corpus to a fresh work directory in the build tree,
# runs the fuzzer on that copy and fails when it finds a crash, leak, timeout or invariant violation.
# Crash inputs land in WORK/artifacts/. Variables: FUZZER, SEEDS, WORK, SECONDS.
foreach(var FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: ${var} is not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
if(IS_DIRECTORY "${SEEDS}")
  file(GLOB seeds LIST_DIRECTORIES false "${SEEDS}/*")
  if(seeds)
    file(COPY ${seeds} DESTINATION "${WORK}/corpus")
  endif()
endif()

execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
          "-artifact_prefix=${WORK}/artifacts/" "${WORK}/corpus"
  WORKING_DIRECTORY "${WORK}"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${result}); reproducer in ${WORK}/artifacts/")
endif()
