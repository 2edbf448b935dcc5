# ctest install_consumer: `cmake --install` of this build into a fresh prefix, then what a user does with
# it: a project of its own built with find_package(runmon) (and the same with pkg-config), run under the
# installed runmon (which finds its modules in the prefix), whose rows must be in the run; the Python module
# imported from the prefix. -DBUILD=<build dir> -DSOURCE=<tests/install> -DWORK=<scratch dir>; -DCXX, -DCC
# and -DFLAGS: the compilers and flags the consumer is built with (those of the build: its sanitizers);
# -DC_LINK: how its C program is linked, when not as CMake links C.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(prefix ${WORK}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed (${status}):\n${out}\n${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(file bin/runmon include/runmon/log.hpp include/runmon/run.hpp include/runmon/runmon.h
             lib/cmake/runmon/runmonConfig.cmake lib/pkgconfig/runmon.pc lib/librunmon.so
             lib/python3/dist-packages/runmon.py share/doc/runmon/README.md share/doc/runmon/training-metrics.md
             lib/runmon/modules/terminal.so)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()

set(c_link "")
if(C_LINK)
  set(c_link "-DCMAKE_C_LINK_EXECUTABLE=${C_LINK}")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE}/consumer -B ${WORK}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC} "-DCMAKE_CXX_FLAGS=${FLAGS}"
    "-DCMAKE_C_FLAGS=${FLAGS}" ${c_link})
run(${CMAKE_COMMAND} --build ${WORK}/consumer)
run(${prefix}/bin/runmon run --dir ${WORK}/wandb --interval 0.2 -- ${WORK}/consumer/consumer)
if(NOT last_output MATCHES "the command's metrics: 5 rows, 2 keys")
  message(FATAL_ERROR "the consumer's rows are not in the run:\n${last_output}")
endif()
# The installed runmon finds its modules: leet draws a frame of the run.
run(${prefix}/bin/runmon leet ${WORK}/wandb/latest-run --print-frame 100x30)
if(NOT last_output MATCHES "loss")
  message(FATAL_ERROR "leet from the prefix did not chart the run:\n${last_output}")
endif()

# runmon inside a program (run.hpp) and from C (runmon.h), each a run of its own read back by the
# installed runmon: its rows and its exit record.
foreach(program in_process c_consumer)
  run(${WORK}/consumer/${program} ${WORK}/${program}-runs)
  file(GLOB logs ${WORK}/${program}-runs/run-*/run-*.wandb)
  run(${prefix}/bin/runmon dump ${logs})
  string(REGEX MATCHALL "\"record_type\":\"history\"" rows "${last_output}")
  list(LENGTH rows row_count)
  if(program STREQUAL "in_process")
    set(expected_rows 5)
  else()
    set(expected_rows 3)
  endif()
  if(NOT row_count EQUAL expected_rows OR NOT last_output MATCHES "\"record_type\":\"exit\"")
    message(FATAL_ERROR "${program}: ${row_count} history rows (not ${expected_rows}) or no exit record:\n${last_output}")
  endif()
endforeach()

find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  run(${PKG_CONFIG} --cflags --libs runmon)
  string(STRIP "${last_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags} ${FLAGS}")
  run(${CXX} ${SOURCE}/consumer/consumer.cpp ${flags} -o ${WORK}/consumer-pkg-config)
  run(${CXX} ${SOURCE}/consumer/in_process.cpp ${flags} -o ${WORK}/in-process-pkg-config)
  set(ENV{LD_LIBRARY_PATH} ${prefix}/lib)  # pkg-config gives no run path
  run(${WORK}/in-process-pkg-config ${WORK}/pkg-config-runs)
endif()

find_program(PYTHON3 python3)
set(ENV{PYTHONPATH} ${prefix}/lib/python3/dist-packages)
run(${PYTHON3} -c "import runmon, sys; sys.exit(0 if runmon.__file__.startswith('${prefix}') else 1)")
