# Fails when contrib/grafana/runmon.rules.yml differs from what scripts/grafana_rules.py makes of the
# dashboard (regenerate it with `scripts/grafana_rules.py` after editing contrib/grafana/runmon.json).
# cmake -DPYTHON=<python3> -DSCRIPT=<scripts/grafana_rules.py> -DDASHBOARD=<json> -DRULES=<committed rules>
#       -DOUT=<scratch> -P this
execute_process(COMMAND ${PYTHON} ${SCRIPT} --dashboard ${DASHBOARD} --output ${OUT} RESULT_VARIABLE status
                ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "scripts/grafana_rules.py failed (${status}): ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${RULES} RESULT_VARIABLE different)
if(different)
  message(FATAL_ERROR "${RULES} is out of date: run scripts/grafana_rules.py")
endif()
