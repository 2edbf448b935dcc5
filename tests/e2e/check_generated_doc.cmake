# Fails when a generated doc differs from what `runmon catalog FLAG` prints (regenerate it with
# `build/runmon catalog FLAG > DOC`): docs/metrics.md (--markdown) and docs/prometheus.md (--prometheus).
# cmake -DRUNMON=<runmon> -DFLAG=<--markdown|--prometheus> -DDOC=<committed doc> -DOUT=<scratch> -P this
execute_process(COMMAND ${RUNMON} catalog ${FLAG} OUTPUT_FILE ${OUT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "runmon catalog ${FLAG} failed: ${status}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${DOC} RESULT_VARIABLE different)
if(different)
  message(FATAL_ERROR "${DOC} is out of date: run build/runmon catalog ${FLAG} > ${DOC}")
endif()
