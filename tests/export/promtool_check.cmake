# Renders the fixture exposition and runs `promtool check metrics` on it: the format must parse and the
# names must pass Prometheus' own lint (units, _total on counters, HELP on every family).
execute_process(COMMAND ${RENDER} OUTPUT_FILE ${OUT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "render_exposition_fixture failed: ${status}")
endif()
execute_process(COMMAND ${PROMTOOL} check metrics INPUT_FILE ${OUT} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
  message(FATAL_ERROR "promtool check metrics on ${OUT} (status ${status}):\n${out}${err}")
endif()
message(STATUS "promtool check metrics: ${OUT} passes")
