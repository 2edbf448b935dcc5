# Renders the fixture backfill and loads it with `promtool tsdb create-blocks-from openmetrics` into a fresh
# directory: Prometheus' OpenMetrics parser must accept the text (families, units, counters, escapes,
# timestamps, # EOF) and its TSDB every sample (each series in time order, no two values at one time).
execute_process(COMMAND ${RENDER} OUTPUT_FILE ${OUT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "render_backfill_fixture failed: ${status}")
endif()
file(REMOVE_RECURSE ${BLOCKS})
execute_process(COMMAND ${PROMTOOL} tsdb create-blocks-from openmetrics ${OUT} ${BLOCKS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "promtool tsdb create-blocks-from openmetrics ${OUT} (status ${status}):\n${out}${err}")
endif()
file(GLOB blocks ${BLOCKS}/*/meta.json)
if(blocks STREQUAL "")
  message(FATAL_ERROR "promtool wrote no block into ${BLOCKS}:\n${out}${err}")
endif()
message(STATUS "promtool tsdb create-blocks-from openmetrics: ${OUT} loads")
