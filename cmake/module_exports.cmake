# Writes the runmon executable's dynamic list (ld --dynamic-list): the runmon symbols its modules leave
# undefined, which the executable must export for them (see cmake/RunmonModules.cmake). Nothing else is
# exported: protobuf, RE2 and (in the lean build) libstdc++, linked in, stay the executable's own.
# A module keeps the shared libstdc++ its libraries need (cpp-httplib), so the lean process holds two C++
# runtimes, which is safe only while no object whose state belongs to one runtime crosses between them: a
# stream or a locale made by one and used by the other fails (its facets are looked up by the other
# runtime's ids: std::bad_cast). A module interface naming one is refused here, at build time.
#   cmake -DNM=nm -DCXXFILT=c++filt -DOUT=file -DMODULES="a.so;b.so" -P module_exports.cmake
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
set(runtime_state_types
    "std::(__cxx11::)?(locale|ios_base|basic_ios|basic_[io]?stream|[io]?stream|basic_[io]?stringstream|[io]?stringstream|basic_[io]?fstream|[io]?fstream|basic_streambuf|streambuf|basic_regex|regex)[^a-z_]")
foreach(symbol IN LISTS symbols)
  execute_process(COMMAND ${CXXFILT} ${symbol} OUTPUT_VARIABLE readable OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "module_exports: ${CXXFILT} failed on ${symbol}")
  endif()
  if("${readable} " MATCHES "${runtime_state_types}")
    message(FATAL_ERROR "module_exports: a module calls ${readable}, which passes a C++ runtime's stream, "
                        "locale or regex between the executable and the module (see this file's header)")
  endif()
endforeach()
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
