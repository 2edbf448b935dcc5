# Fails when a generated doc differs from what `runmon ARGS` prints (regenerate it with
# `build/runmon ARGS > DOC`): docs/metrics.md (catalog --markdown), docs/prometheus.md (catalog
# --prometheus) and docs/leet-keys.md (leet --print-keys).
# cmake -DRUNMON=<runmon> "-DARGS=<arguments;as;a;list>" -DDOC=<committed doc> -DOUT=<scratch> -P this
execute_process(COMMAND ${RUNMON} ${ARGS} OUTPUT_FILE ${OUT} RESULT_VARIABLE status)
string(REPLACE ";" " " shown "${ARGS}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "runmon ${shown} failed: ${status}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${DOC} RESULT_VARIABLE different)
if(different)
  message(FATAL_ERROR "${DOC} is out of date: run build/runmon ${shown} > ${DOC}")
endif()
