# ctest install_consumer: `cmake --install` of this build into a fresh prefix, then what a user does with
# it: a project of its own built with find_package(runmon) (and the same with pkg-config), run under the
# installed runmon (which finds its modules in the prefix), whose rows must be in the run; the Python module
# imported from the prefix. -DBUILD=<build dir> -DSOURCE=<tests/install> -DWORK=<scratch dir>
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
foreach(file bin/runmon include/runmon/log.hpp share/cmake/runmon/runmonConfig.cmake share/pkgconfig/runmon.pc
             lib/python3/dist-packages/runmon.py share/doc/runmon/README.md share/doc/runmon/training-metrics.md
             lib/runmon/modules/terminal.so)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${file}")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${SOURCE}/consumer -B ${WORK}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release)
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

find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/share/pkgconfig)
  run(${PKG_CONFIG} --cflags --libs runmon)
  string(STRIP "${last_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(c++ ${SOURCE}/consumer/consumer.cpp ${flags} -o ${WORK}/consumer-pkg-config)
endif()

find_program(PYTHON3 python3)
set(ENV{PYTHONPATH} ${prefix}/lib/python3/dist-packages)
run(${PYTHON3} -c "import runmon, sys; sys.exit(0 if runmon.__file__.startswith('${prefix}') else 1)")
