# Writes the runmon executable's dynamic list (ld --dynamic-list): the runmon symbols its modules leave
# undefined, which the executable must export for them (see cmake/RunmonModules.cmake). Nothing else is
# exported: protobuf and RE2, linked in, stay the executable's own.
#   cmake -DNM=nm -DOUT=file -DMODULES="a.so;b.so" -P module_exports.cmake
set(symbols "")
foreach(module IN LISTS MODULES)
  execute_process(COMMAND ${NM} -D --undefined-only --format=posix ${module}
                  OUTPUT_VARIABLE listing RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "module_exports: ${NM} failed on ${module}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^_Z[^ @]*6runmon[^ @]*" symbol "${line}")
    if(symbol)
      list(APPEND symbols "${symbol}")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES symbols)
list(SORT symbols)
set(text "{\n")
foreach(symbol IN LISTS symbols)
  string(APPEND text "  ${symbol};\n")
endforeach()
string(APPEND text "};\n")
# Rewritten only when it changes, so the executable is relinked only then.
if(EXISTS ${OUT})
  file(READ ${OUT} previous)
endif()
if(NOT previous STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
