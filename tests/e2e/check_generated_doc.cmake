# Fails when docs/metrics.md differs from what `runmon catalog --markdown` prints (regenerate it with
# `build/runmon catalog --markdown > docs/metrics.md`).
execute_process(COMMAND ${RUNMON} catalog --markdown OUTPUT_FILE ${OUT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "runmon catalog --markdown failed: ${status}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${DOC} RESULT_VARIABLE different)
if(different)
  message(FATAL_ERROR "docs/metrics.md is out of date: run build/runmon catalog --markdown > docs/metrics.md")
endif()
